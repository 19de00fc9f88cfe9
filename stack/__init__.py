"""The local stack: installs and runs Onceflow's components as processes under supervisor."""
