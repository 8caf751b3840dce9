-- 0008 (PostgreSQL): an action's write is one statement (data-modifying WITH clauses: the
-- session row, the audit rows, the purchase, the token, the idempotency answer). When a fact
-- the decision relied on no longer holds (the photo was bought meanwhile, the session's token
-- was revoked), the statement must keep nothing: it calls this function, whose error aborts
-- the whole statement. SQLSTATE PD001 ("photosd: stale facts") tells photosd to decide again.
CREATE FUNCTION photosd_stale_facts(reason text) RETURNS integer LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION USING ERRCODE = 'PD001', MESSAGE = reason;
END
$$;
