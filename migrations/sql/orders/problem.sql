CREATE FUNCTION orders.problem(p_slug text, p_title text, p_status integer, p_detail text)
RETURNS jsonb LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN jsonb_build_object('type', 'urn:onceflow:problem:' || p_slug, 'title', p_title,
                          'status', p_status, 'detail', p_detail)
