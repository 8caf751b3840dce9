--
-- PostgreSQL database dump
--

\restrict UBv1u5W4ZWDVkrWpYPCeZpacs6Q9WEuBOBgWZndBetwS0zYK0wtgkT2GwEkFKem

-- Dumped from database version 15.18 (Debian 15.18-0+deb12u1)
-- Dumped by pg_dump version 15.18 (Debian 15.18-0+deb12u1)

SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

--
-- Name: audit_archives_finish_only(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.audit_archives_finish_only() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF OLD.finished_at IS NULL AND NEW.number = OLD.number AND NEW.path = OLD.path AND NEW.before = OLD.before THEN
        RETURN NEW;
    END IF;
    RAISE EXCEPTION 'audit_archives is append-only: UPDATE refused';
END;
$$;


--
-- Name: audit_events_archived_only(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.audit_events_archived_only() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM audit_archived_trails t
               WHERE t.trail = OLD.session_id AND t.first_seq <= OLD.seq AND t.last_seq >= OLD.seq) THEN
        RETURN OLD;
    END IF;
    RAISE EXCEPTION 'audit_events is append-only: DELETE refused (rows leave only through photos-admin audit archive)';
END;
$$;


--
-- Name: audit_events_redaction_only(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.audit_events_redaction_only() RETURNS trigger
    LANGUAGE plpgsql
    AS $_$
BEGIN
    IF EXISTS (SELECT 1 FROM audit_redactions r WHERE r.event_id = OLD.id)
        AND NEW.id = OLD.id AND NEW.session_id = OLD.session_id AND NEW.seq = OLD.seq AND NEW.at = OLD.at
        AND NEW.actor = OLD.actor AND NEW.user_id IS NOT DISTINCT FROM OLD.user_id AND NEW.username IS NULL
        AND NEW.coordinator IS NOT DISTINCT FROM OLD.coordinator AND NEW.step = OLD.step
        AND NEW.screen IS NOT DISTINCT FROM OLD.screen
        AND NEW.prev_hash = OLD.prev_hash AND NEW.hash = OLD.hash
        AND (NEW.detail = OLD.detail OR NEW.detail = json_remove(OLD.detail, '$.attemptedUsername'))
    THEN
        RETURN NEW;
    END IF;
    RAISE EXCEPTION 'audit_events is append-only: UPDATE refused';
END;
$_$;


--
-- Name: audit_redactions_with_row_only(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.audit_redactions_with_row_only() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM audit_events e WHERE e.id = OLD.event_id) THEN
        RETURN OLD;
    END IF;
    RAISE EXCEPTION 'audit_redactions is append-only: DELETE refused';
END;
$$;


--
-- Name: json_extract(text, text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.json_extract(document text, path text) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT
    AS $$
    SELECT document::jsonb ->> substr(path, 3)
$$;


--
-- Name: json_remove(text, text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.json_remove(document text, path text) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT
    AS $$
    SELECT (document::jsonb - substr(path, 3))::text
$$;


--
-- Name: photosd_stale_facts(text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.photosd_stale_facts(reason text) RETURNS integer
    LANGUAGE plpgsql
    AS $$
BEGIN
    RAISE EXCEPTION USING ERRCODE = 'PD001', MESSAGE = reason;
END
$$;


--
-- Name: refuse_change(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.refuse_change() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    RAISE EXCEPTION '% is append-only: % refused', TG_TABLE_NAME, TG_OP;
END;
$$;


SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: audit_archived_trails; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.audit_archived_trails (
    trail text NOT NULL,
    first_seq bigint NOT NULL,
    last_seq bigint NOT NULL,
    last_hash text NOT NULL,
    archive bigint NOT NULL
);


--
-- Name: audit_archives; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.audit_archives (
    number bigint NOT NULL,
    path text NOT NULL,
    before text NOT NULL,
    started_at text NOT NULL,
    finished_at text,
    rows bigint,
    segments bigint,
    rows_digest text,
    segments_digest text,
    prev_hash text,
    public_key text,
    signature text,
    hash text
);


--
-- Name: audit_chain_cutover; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.audit_chain_cutover (
    global_chain_until_id bigint NOT NULL
);


--
-- Name: audit_checkpoints; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.audit_checkpoints (
    number bigint NOT NULL,
    at text NOT NULL,
    prev_hash text NOT NULL,
    covers_until_id bigint NOT NULL,
    heads text NOT NULL,
    public_key text NOT NULL,
    signature text NOT NULL,
    hash text NOT NULL,
    next_public_key text
);


--
-- Name: audit_events; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.audit_events (
    id bigint NOT NULL,
    session_id text NOT NULL,
    seq bigint NOT NULL,
    at text NOT NULL,
    actor text NOT NULL,
    user_id bigint,
    username text,
    coordinator text,
    step text NOT NULL,
    screen text,
    detail text DEFAULT '{}'::text NOT NULL,
    prev_hash text NOT NULL,
    hash text NOT NULL
);


--
-- Name: audit_events_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.audit_events ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.audit_events_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: audit_redactions; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.audit_redactions (
    event_id bigint NOT NULL,
    user_id bigint NOT NULL,
    at text NOT NULL
);


--
-- Name: users; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.users (
    id bigint NOT NULL,
    username text NOT NULL,
    password_hash text NOT NULL,
    created_at text NOT NULL,
    name_salt text,
    erased_at text
);


--
-- Name: audit_trail; Type: VIEW; Schema: public; Owner: -
--

CREATE VIEW public.audit_trail AS
 SELECT e.session_id,
    e.seq,
    e.at,
    e.actor,
    COALESCE(e.username,
        CASE
            WHEN (u.erased_at IS NULL) THEN u.username
            ELSE NULL::text
        END) AS username,
    e.coordinator,
    e.step,
    e.screen,
    e.detail
   FROM (public.audit_events e
     LEFT JOIN public.users u ON ((u.id = e.user_id)))
  ORDER BY e.id;


--
-- Name: buy_exits; Type: VIEW; Schema: public; Owner: -
--

CREATE VIEW public.buy_exits AS
 SELECT substr(audit_events.at, 1, 10) AS day,
    ((audit_events.detail)::jsonb ->> 'reason'::text) AS reason,
    count(*) AS flows
   FROM public.audit_events
  WHERE ((audit_events.session_id <> ALL (ARRAY['operator'::text, 'api'::text])) AND (audit_events.step = 'coordinator.finish'::text) AND (audit_events.coordinator ~~ '%/buy'::text))
  GROUP BY (substr(audit_events.at, 1, 10)), ((audit_events.detail)::jsonb ->> 'reason'::text);


--
-- Name: console_sessions; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.console_sessions (
    id_hash text NOT NULL,
    operator_id bigint NOT NULL,
    csrf_token text NOT NULL,
    created_at text NOT NULL,
    last_seen text NOT NULL
);


--
-- Name: experiment_exposures; Type: VIEW; Schema: public; Owner: -
--

CREATE VIEW public.experiment_exposures AS
 SELECT audit_events.session_id,
    audit_events.seq,
    audit_events.at,
    audit_events.user_id,
    audit_events.coordinator,
    ((audit_events.detail)::jsonb ->> 'experiment'::text) AS experiment,
    ((audit_events.detail)::jsonb ->> 'point'::text) AS point,
    ((audit_events.detail)::jsonb ->> 'variant'::text) AS variant
   FROM public.audit_events
  WHERE (audit_events.step = 'experiment.exposed'::text);


--
-- Name: experiments; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.experiments (
    name text NOT NULL,
    point text NOT NULL,
    variants text NOT NULL,
    running bigint NOT NULL,
    kept text,
    started_at text NOT NULL,
    stopped_at text,
    CONSTRAINT experiments_running_check CHECK ((running = ANY (ARRAY[(0)::bigint, (1)::bigint])))
);


--
-- Name: funnel_marks; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.funnel_marks (
    day text NOT NULL,
    stage bigint NOT NULL,
    session_id text NOT NULL
);


--
-- Name: funnel_marks_progress; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.funnel_marks_progress (
    marked_until_id bigint NOT NULL
);


--
-- Name: idempotency_keys; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.idempotency_keys (
    session_id text NOT NULL,
    key text NOT NULL,
    request_hash text NOT NULL,
    response text NOT NULL,
    created_at text NOT NULL
);


--
-- Name: maintenance_leases; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.maintenance_leases (
    name text NOT NULL,
    holder text NOT NULL,
    until text NOT NULL
);


--
-- Name: operators; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.operators (
    id bigint NOT NULL,
    name text NOT NULL,
    role text NOT NULL,
    password_hash text NOT NULL,
    created_at text NOT NULL,
    CONSTRAINT operators_role_check CHECK ((role = ANY (ARRAY['viewer'::text, 'operator'::text])))
);


--
-- Name: operators_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.operators ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.operators_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: photos; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.photos (
    id bigint NOT NULL,
    title text NOT NULL,
    url text NOT NULL,
    price_cents bigint NOT NULL,
    created_at text NOT NULL,
    CONSTRAINT photos_price_cents_check CHECK ((price_cents >= 0))
);


--
-- Name: photos_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.photos ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.photos_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: purchase_funnel; Type: VIEW; Schema: public; Owner: -
--

CREATE VIEW public.purchase_funnel AS
 SELECT funnel_marks.day,
    count(*) FILTER (WHERE (funnel_marks.stage = 1)) AS sessions,
    count(*) FILTER (WHERE (funnel_marks.stage = 2)) AS viewed_photo,
    count(*) FILTER (WHERE (funnel_marks.stage = 3)) AS started_buy,
    count(*) FILTER (WHERE (funnel_marks.stage = 4)) AS asked_to_sign_in,
    count(*) FILTER (WHERE (funnel_marks.stage = 5)) AS purchased
   FROM public.funnel_marks
  GROUP BY funnel_marks.day;


--
-- Name: purchases; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.purchases (
    id bigint NOT NULL,
    user_id bigint NOT NULL,
    photo_id bigint NOT NULL,
    price_cents bigint NOT NULL,
    purchased_at text NOT NULL,
    session_id text
);


--
-- Name: purchases_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.purchases ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.purchases_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: schema_migrations; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.schema_migrations (
    version bigint NOT NULL,
    name text NOT NULL,
    checksum text NOT NULL,
    applied_at text NOT NULL
);


--
-- Name: sessions; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.sessions (
    id text NOT NULL,
    version bigint NOT NULL,
    state text NOT NULL,
    user_id bigint,
    created_at text NOT NULL,
    updated_at text NOT NULL,
    trail_seq bigint DEFAULT 0 NOT NULL,
    trail_hash text DEFAULT '0000000000000000000000000000000000000000000000000000000000000000'::text NOT NULL,
    layout text,
    top_screen text,
    token_id bigint,
    photo_ids text,
    ended_at text,
    secret_hash text
)
WITH (fillfactor='70');
ALTER TABLE ONLY public.sessions ALTER COLUMN state SET COMPRESSION lz4;


--
-- Name: sign_in_attempts; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.sign_in_attempts (
    id bigint NOT NULL,
    username_key text NOT NULL,
    state text NOT NULL,
    at text NOT NULL,
    address text DEFAULT ''::text NOT NULL,
    CONSTRAINT sign_in_attempts_state_check CHECK ((state = ANY (ARRAY['checking'::text, 'failed'::text])))
);


--
-- Name: sign_in_attempts_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.sign_in_attempts ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.sign_in_attempts_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: sign_in_trusted_addresses; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.sign_in_trusted_addresses (
    username_key text NOT NULL,
    address text NOT NULL,
    at text NOT NULL
);


--
-- Name: tokens; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.tokens (
    id bigint NOT NULL,
    token_hash text NOT NULL,
    user_id bigint NOT NULL,
    issued_at text NOT NULL,
    expires_at text NOT NULL,
    revoked_at text
);


--
-- Name: tokens_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.tokens ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.tokens_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: users_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.users ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.users_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Data for Name: audit_archived_trails; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.audit_archived_trails (trail, first_seq, last_seq, last_hash, archive) FROM stdin;
0mwz9uegvIQQUJQ_YY-CTLcoBCeADrGDc	1	6	699d92083b259def437ca9cce47fbf8a5034112639ce04e347d10946f05ab9ba	1
operator	1	7	bf253b7d6c14d104e0ccc999ef24dcbd3b3e5da8899f88b12145ccf3a1e6d356	1
\.


--
-- Data for Name: audit_archives; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.audit_archives (number, path, before, started_at, finished_at, rows, segments, rows_digest, segments_digest, prev_hash, public_key, signature, hash) FROM stdin;
1	/tmp/tmp.4CQVJitvxS/archive-1.sqlite	2026-11-27T17:45:00.000Z	2026-11-27T17:45:02.144Z	2026-11-27T17:45:02.259Z	13	2	821c50e397a6c6ab54bdc74b45cac66192ac536d1b7aaf06dcd94e1a7dcf8aaf	902f99169ec73f0a8f55dbdb56b583a4ff5f828a35c8df9459135015bc583a53	0000000000000000000000000000000000000000000000000000000000000000	add1a2d81775512499bb2397a6dc30dac978e34f7d999f9dc546093351dd0f68	d6b2398256896604829c16a177e5a83a0df1527c6e0bc5c96f1c3b3cabefbdd91e5b3265342676395592176c22f91c9d0ab51926487322d74eb228866aa99102	7251c6323faa741963d14f7fbdabdeb4dc46cc21cc114b1785f6b7ec3e3c7100
\.


--
-- Data for Name: audit_chain_cutover; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.audit_chain_cutover (global_chain_until_id) FROM stdin;
0
\.


--
-- Data for Name: audit_checkpoints; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.audit_checkpoints (number, at, prev_hash, covers_until_id, heads, public_key, signature, hash, next_public_key) FROM stdin;
1	2026-11-27T17:44:59.323Z	0000000000000000000000000000000000000000000000000000000000000000	13	[{"hash":"699d92083b259def437ca9cce47fbf8a5034112639ce04e347d10946f05ab9ba","trail":"0mwz9uegvIQQUJQ_YY-CTLcoBCeADrGDc","seq":6},{"hash":"bf253b7d6c14d104e0ccc999ef24dcbd3b3e5da8899f88b12145ccf3a1e6d356","trail":"operator","seq":7}]	add1a2d81775512499bb2397a6dc30dac978e34f7d999f9dc546093351dd0f68	43ed20d14980b811ab1af78d9d34c447f3eb1dab74585dd1bd1fbc63c86f8be732c3ab8ab4b0a0e97c922305e9295e6066f3fc914937b39e1ee7e65bcf7a8f04	1d4e23528b2e0d31b7320e6834347988e15026432a8d4aef851c9110ced62f33	\N
2	2026-11-27T17:45:03.742Z	1d4e23528b2e0d31b7320e6834347988e15026432a8d4aef851c9110ced62f33	25	[{"trail":"0mwz9uk2tcWNqNtibGxbVmL2jgbVI_5cp","seq":9,"hash":"b8bf6a54ca610e47df5f735dcfa0f0d9c8a4ebf49fe3b6a8031d3ae877b36fe3"},{"trail":"api","seq":1,"hash":"0b41fed32abe691e38afa1f7ad3c8812158e15d25a6c4f7ba72e087b4a623d00"},{"trail":"operator","seq":9,"hash":"99221d30876fe830f64325d70bcf25183d09e301a0a6da6072e84bd96ba127f6"}]	add1a2d81775512499bb2397a6dc30dac978e34f7d999f9dc546093351dd0f68	353e46df09249c4bc4102e76c30c9b67e14d5d77c89e5912a6aef9bd5a9a335043279235a42c235a07d41116a0f57759524f1ce87b0c2b61866e0a4806530206	2bf600a2fef022df885ccf08e6673c0b0dfc77fb9a290ec544eaa93eaffd04e2	\N
3	2026-11-27T17:45:04.179Z	2bf600a2fef022df885ccf08e6673c0b0dfc77fb9a290ec544eaa93eaffd04e2	25	[]	add1a2d81775512499bb2397a6dc30dac978e34f7d999f9dc546093351dd0f68	9ff4551c3c2be27fe4ff0b94e7ab688d42fe6d494c0e290e8a30fa62add55b6ce9cc6f4cb41a810474fc5f32d212e3fa22c07e7376d7611bc51372a1eb4b6b01	2bd387f966f785ff32ac45307173cfed89b6eba9b7b4511ebb014fd0544c441e	\N
\.


--
-- Data for Name: audit_events; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.audit_events (id, session_id, seq, at, actor, user_id, username, coordinator, step, screen, detail, prev_hash, hash) FROM stdin;
15	api	1	2026-11-27T17:45:03.225Z	client	2	\N	\N	auth.signIn	\N	{}	0000000000000000000000000000000000000000000000000000000000000000	0b41fed32abe691e38afa1f7ad3c8812158e15d25a6c4f7ba72e087b4a623d00
16	0mwz9uk2tcWNqNtibGxbVmL2jgbVI_5cp	1	2026-11-27T17:45:03.269Z	client	\N	\N	\N	session.start	\N	{}	0000000000000000000000000000000000000000000000000000000000000000	d3d3528ed64a10f2ba9d97dfa658134315f09a23946d1c6c302eef59e30b4165
17	0mwz9uk2tcWNqNtibGxbVmL2jgbVI_5cp	2	2026-11-27T17:45:03.269Z	client	\N	\N	app	coordinator.start	\N	{"id":"app","kind":"app"}	d3d3528ed64a10f2ba9d97dfa658134315f09a23946d1c6c302eef59e30b4165	c845a980591284c997d8e982cd45c6e744b29d1dad240251e74a44632352e0d8
18	0mwz9uk2tcWNqNtibGxbVmL2jgbVI_5cp	3	2026-11-27T17:45:03.269Z	client	\N	\N	app	screen.push	photos	{}	c845a980591284c997d8e982cd45c6e744b29d1dad240251e74a44632352e0d8	37dd9ec250f580ed2109738f66e7425d3ef6a06307c252fb1fa8172bebecad5a
19	0mwz9uk2tcWNqNtibGxbVmL2jgbVI_5cp	4	2026-11-27T17:45:03.416Z	client	\N	\N	app	action	\N	{"action":"selectPhoto","photoId":3}	37dd9ec250f580ed2109738f66e7425d3ef6a06307c252fb1fa8172bebecad5a	d6eca8d67a000ace18aecb2065dc5c1de16b6d43b2a00e5b5d756e0d3122d293
20	0mwz9uk2tcWNqNtibGxbVmL2jgbVI_5cp	5	2026-11-27T17:45:03.416Z	client	\N	\N	app	screen.push	photo	{"photoId":3}	d6eca8d67a000ace18aecb2065dc5c1de16b6d43b2a00e5b5d756e0d3122d293	f0143f4f9e8c53a118b79eb56326232c70ad4adc5adf76560e7e54f2b3ccc718
21	0mwz9uk2tcWNqNtibGxbVmL2jgbVI_5cp	6	2026-11-27T17:45:03.447Z	client	\N	\N	app	action	\N	{"action":"buy"}	f0143f4f9e8c53a118b79eb56326232c70ad4adc5adf76560e7e54f2b3ccc718	960370dfe800dbe99ad6d9cc0d45e824480af15ea5634d60ea85a8e377497abc
22	0mwz9uk2tcWNqNtibGxbVmL2jgbVI_5cp	7	2026-11-27T17:45:03.447Z	client	\N	\N	app/buy	coordinator.start	\N	{"buy.presentation":"modal","id":"buy-7","kind":"buy","photoId":3,"presentation":"modal"}	960370dfe800dbe99ad6d9cc0d45e824480af15ea5634d60ea85a8e377497abc	376b8b61f6153c9fecc9edf90ba4c7441ed814fe6f2ab6371108ee974234468a
23	0mwz9uk2tcWNqNtibGxbVmL2jgbVI_5cp	8	2026-11-27T17:45:03.447Z	client	\N	\N	app/buy	experiment.exposed	\N	{"experiment":"fixture-presentation","point":"buy.presentation","variant":"modal"}	376b8b61f6153c9fecc9edf90ba4c7441ed814fe6f2ab6371108ee974234468a	6d3d939596ea60635425e4cb8ff20bc0939c19e4876c37eb0528682f3b0865e5
24	0mwz9uk2tcWNqNtibGxbVmL2jgbVI_5cp	9	2026-11-27T17:45:03.447Z	client	\N	\N	app/buy	screen.present	signIn	{}	6d3d939596ea60635425e4cb8ff20bc0939c19e4876c37eb0528682f3b0865e5	b8bf6a54ca610e47df5f735dcfa0f0d9c8a4ebf49fe3b6a8031d3ae877b36fe3
25	operator	9	2026-11-27T17:45:03.692Z	operator:root	2	\N	\N	user.erased	\N	{"auditRowsRedacted":0,"sessionsSignedOut":0,"userId":2}	2437f1513b123a0a0ee0fb80579b302c1455f44c0f99f0f7c9e91cb20db5171d	99221d30876fe830f64325d70bcf25183d09e301a0a6da6072e84bd96ba127f6
14	operator	8	2026-11-27T17:45:01.792Z	operator:root	\N	\N	\N	photo.added	\N	{"count":1,"photoId":4}	bf253b7d6c14d104e0ccc999ef24dcbd3b3e5da8899f88b12145ccf3a1e6d356	2437f1513b123a0a0ee0fb80579b302c1455f44c0f99f0f7c9e91cb20db5171d
\.


--
-- Data for Name: audit_redactions; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.audit_redactions (event_id, user_id, at) FROM stdin;
\.


--
-- Data for Name: console_sessions; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.console_sessions (id_hash, operator_id, csrf_token, created_at, last_seen) FROM stdin;
\.


--
-- Data for Name: experiments; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.experiments (name, point, variants, running, kept, started_at, stopped_at) FROM stdin;
fixture-presentation	buy.presentation	[{"name":"push","weight":50},{"name":"modal","weight":50}]	1	\N	2026-11-27T17:44:55.301Z	\N
\.


--
-- Data for Name: funnel_marks; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.funnel_marks (day, stage, session_id) FROM stdin;
2026-11-27	1	0mwz9uegvIQQUJQ_YY-CTLcoBCeADrGDc
2026-11-27	2	0mwz9uegvIQQUJQ_YY-CTLcoBCeADrGDc
2026-11-27	1	0mwz9uk2tcWNqNtibGxbVmL2jgbVI_5cp
2026-11-27	2	0mwz9uk2tcWNqNtibGxbVmL2jgbVI_5cp
2026-11-27	3	0mwz9uk2tcWNqNtibGxbVmL2jgbVI_5cp
2026-11-27	4	0mwz9uk2tcWNqNtibGxbVmL2jgbVI_5cp
\.


--
-- Data for Name: funnel_marks_progress; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.funnel_marks_progress (marked_until_id) FROM stdin;
25
\.


--
-- Data for Name: idempotency_keys; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.idempotency_keys (session_id, key, request_hash, response, created_at) FROM stdin;
\.


--
-- Data for Name: maintenance_leases; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.maintenance_leases (name, holder, until) FROM stdin;
audit-archive	vm:16847:ACF84724	1970-01-01T00:00:00.000Z
session-sweep	vm:16898:e2NeR_gr	1970-01-01T00:00:00.000Z
\.


--
-- Data for Name: operators; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.operators (id, name, role, password_hash, created_at) FROM stdin;
\.


--
-- Data for Name: photos; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.photos (id, title, url, price_cents, created_at) FROM stdin;
1	Harbour at dawn	https://photos.example.com/harbour-at-dawn.jpg	250	2026-11-27T17:44:54.069Z
2	Snow at night	https://photos.example.com/snow-at-night.jpg	250	2026-11-27T17:44:54.354Z
3	Orchard	https://photos.example.com/orchard.jpg	250	2026-11-27T17:44:54.690Z
4	After the cut	https://photos.example.com/after-the-cut.jpg	100	2026-11-27T17:45:01.792Z
\.


--
-- Data for Name: purchases; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.purchases (id, user_id, photo_id, price_cents, purchased_at, session_id) FROM stdin;
1	1	2	250	2026-11-27T17:44:55.020Z	\N
\.


--
-- Data for Name: schema_migrations; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.schema_migrations (version, name, checksum, applied_at) FROM stdin;
1	0001_initial.sql	8f24f0df9c3567dd73237997b97ff65f6c59e78cfbcfb28488a5ea1642ce84cd	2026-11-27T17:44:53.026Z
2	0002_idempotency_keys_v2.sql	b9d07d371ffd93df540d90336c39c315cb7284021cf1d001aa23361d9364f981	2026-11-27T17:44:53.089Z
3	0003_audit_chains_and_checkpoints.sql	de746089887c9d01c320e7356eb816586397b793e6914378932c357b371d1087	2026-11-27T17:44:53.098Z
4	0004_analytics_views.sql	cefa94fe2e705200869b4d67b9142bcec3c5f985d1f52a61a948e7e7be1de8e6	2026-11-27T17:44:53.116Z
5	0005_sign_in_attempts.sql	79c9117e69409a09cf12450eeb717fc64abe3bafcb2fdf273ef58699215c6b8a	2026-11-27T17:44:53.142Z
6	0006_session_trail_head.sql	35ecb0f1f4198d0709f0de399b460dc63dfecc010e8d69a5763b10ee9a243a58	2026-11-27T17:44:53.153Z
7	0007_sign_in_limits_per_address.sql	27184c0a43437bc38ea1dd3a7a606b9bf5b8d1b7e82cc9f5766802e8ea8f9efc	2026-11-27T17:44:53.165Z
8	0008_action_statement_refusal.sql	5c663840af004e6356ad2dab0a79ea9f91a23bddd0ef24548a73ade549bb3572	2026-11-27T17:44:53.181Z
9	0009_operators.sql	08a8882fb1f53799a231446391fb677618c7d7132055b6b773d0f3f3f57ddab6	2026-11-27T17:44:53.186Z
10	0010_session_columns.sql	8fb72ec207c1c7781c89d2351a07bfca354118bbb31a2d32db189994f9b7db47	2026-11-27T17:44:53.205Z
11	0011_erasure.sql	f68036eba9f2b240ae506f09f8c6ee2e008b28e87810e4ba803bc767f26001ac	2026-11-27T17:44:53.225Z
12	0012_sessions_end.sql	0fa7b39af3b58693e173bee729a899dbc791461ba03cf792609b7d2d2a032f65	2026-11-27T17:44:53.250Z
13	0013_audit_archives.sql	1a2c7a9dbe20fbf1022fcef0f33f776c26e924824c7b0a61277e44c6fbb17d24	2026-11-27T17:44:53.261Z
14	0014_session_secrets.sql	0cef2c3f285828e9bd9fc7e077a659db459e8e9fdba5528761301d5ee1125c7b	2026-11-27T17:44:53.297Z
15	0015_audit_key_rotation.sql	1fb811f29dd53d121f6d67d5923c2026abda2f253ac7e950bfa276468b22abb9	2026-11-27T17:44:53.305Z
16	0016_experiments.sql	8e1847ecf73ffd71b501c28f99af9e9f71ba2b89a4ecf2c4e01bd80a34964a43	2026-11-27T17:44:53.313Z
\.


--
-- Data for Name: sessions; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.sessions (id, version, state, user_id, created_at, updated_at, trail_seq, trail_hash, layout, top_screen, token_id, photo_ids, ended_at, secret_hash) FROM stdin;
0mwz9uk2tcWNqNtibGxbVmL2jgbVI_5cp	3	{"coordinators":{"children":[{"children":[],"id":"buy-7","kind":"buy","photoId":3,"presentation":"modal","stackIndex":1,"variants":{"buy.presentation":"modal"}}],"id":"app","kind":"app"},"experiments":[{"experiment":"fixture-presentation","variant":"modal"}],"stacks":[{"presentation":"root","presenter":"app","screens":[{"owner":"app","screen":"photos"},{"owner":"app","photoId":3,"screen":"photo"}]},{"presentation":"modal","presenter":"buy-7","screens":[{"owner":"buy-7","screen":"signIn"}]}],"top":{"actions":["submit","cancel","dismiss"],"screen":"signIn"}}	\N	2026-11-27T17:45:03.269Z	2026-11-27T17:45:03.447Z	9	b8bf6a54ca610e47df5f735dcfa0f0d9c8a4ebf49fe3b6a8031d3ae877b36fe3	stack	signIn	\N	{3}	\N	3a172444f1937a79bd6bb2ed6cb880f17ad8a8eec890fc6589f410d94ae14301
\.


--
-- Data for Name: sign_in_attempts; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.sign_in_attempts (id, username_key, state, at, address) FROM stdin;
\.


--
-- Data for Name: sign_in_trusted_addresses; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.sign_in_trusted_addresses (username_key, address, at) FROM stdin;
\.


--
-- Data for Name: tokens; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.tokens (id, token_hash, user_id, issued_at, expires_at, revoked_at) FROM stdin;
\.


--
-- Data for Name: users; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.users (id, username, password_hash, created_at, name_salt, erased_at) FROM stdin;
1	alice	$2b$04$SinX4DyP3hYKwKPglVVZ9e50WvCCjlEVHFvdEaPWIE6qUAE2G5gPi	2026-11-27T17:44:53.577Z	wjPDZTl01Cuz0RPC0waDRFxwKP79Q63NwGB7OC0bmng	\N
2	erased:2		2026-11-27T17:44:53.841Z	\N	2026-11-27T17:45:03.692Z
\.


--
-- Name: audit_events_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.audit_events_id_seq', 25, true);


--
-- Name: operators_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.operators_id_seq', 1, false);


--
-- Name: photos_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.photos_id_seq', 4, true);


--
-- Name: purchases_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.purchases_id_seq', 1, true);


--
-- Name: sign_in_attempts_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.sign_in_attempts_id_seq', 1, true);


--
-- Name: tokens_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.tokens_id_seq', 1, false);


--
-- Name: users_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.users_id_seq', 2, true);


--
-- Name: audit_archived_trails audit_archived_trails_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.audit_archived_trails
    ADD CONSTRAINT audit_archived_trails_pkey PRIMARY KEY (trail, first_seq);


--
-- Name: audit_archives audit_archives_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.audit_archives
    ADD CONSTRAINT audit_archives_pkey PRIMARY KEY (number);


--
-- Name: audit_checkpoints audit_checkpoints_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.audit_checkpoints
    ADD CONSTRAINT audit_checkpoints_pkey PRIMARY KEY (number);


--
-- Name: audit_events audit_events_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.audit_events
    ADD CONSTRAINT audit_events_pkey PRIMARY KEY (id);


--
-- Name: audit_events audit_events_session_id_seq_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.audit_events
    ADD CONSTRAINT audit_events_session_id_seq_key UNIQUE (session_id, seq);


--
-- Name: audit_redactions audit_redactions_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.audit_redactions
    ADD CONSTRAINT audit_redactions_pkey PRIMARY KEY (event_id);


--
-- Name: console_sessions console_sessions_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.console_sessions
    ADD CONSTRAINT console_sessions_pkey PRIMARY KEY (id_hash);


--
-- Name: experiments experiments_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.experiments
    ADD CONSTRAINT experiments_pkey PRIMARY KEY (name);


--
-- Name: funnel_marks funnel_marks_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.funnel_marks
    ADD CONSTRAINT funnel_marks_pkey PRIMARY KEY (day, stage, session_id);


--
-- Name: idempotency_keys idempotency_keys_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.idempotency_keys
    ADD CONSTRAINT idempotency_keys_pkey PRIMARY KEY (session_id, key);


--
-- Name: maintenance_leases maintenance_leases_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.maintenance_leases
    ADD CONSTRAINT maintenance_leases_pkey PRIMARY KEY (name);


--
-- Name: operators operators_name_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.operators
    ADD CONSTRAINT operators_name_key UNIQUE (name);


--
-- Name: operators operators_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.operators
    ADD CONSTRAINT operators_pkey PRIMARY KEY (id);


--
-- Name: photos photos_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.photos
    ADD CONSTRAINT photos_pkey PRIMARY KEY (id);


--
-- Name: purchases purchases_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.purchases
    ADD CONSTRAINT purchases_pkey PRIMARY KEY (id);


--
-- Name: purchases purchases_user_id_photo_id_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.purchases
    ADD CONSTRAINT purchases_user_id_photo_id_key UNIQUE (user_id, photo_id);


--
-- Name: schema_migrations schema_migrations_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.schema_migrations
    ADD CONSTRAINT schema_migrations_pkey PRIMARY KEY (version);


--
-- Name: sessions sessions_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.sessions
    ADD CONSTRAINT sessions_pkey PRIMARY KEY (id);


--
-- Name: sign_in_attempts sign_in_attempts_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.sign_in_attempts
    ADD CONSTRAINT sign_in_attempts_pkey PRIMARY KEY (id);


--
-- Name: sign_in_trusted_addresses sign_in_trusted_addresses_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.sign_in_trusted_addresses
    ADD CONSTRAINT sign_in_trusted_addresses_pkey PRIMARY KEY (username_key, address);


--
-- Name: tokens tokens_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.tokens
    ADD CONSTRAINT tokens_pkey PRIMARY KEY (id);


--
-- Name: tokens tokens_token_hash_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.tokens
    ADD CONSTRAINT tokens_token_hash_key UNIQUE (token_hash);


--
-- Name: users users_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.users
    ADD CONSTRAINT users_pkey PRIMARY KEY (id);


--
-- Name: users users_username_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.users
    ADD CONSTRAINT users_username_key UNIQUE (username);


--
-- Name: audit_archived_trails_by_archive; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX audit_archived_trails_by_archive ON public.audit_archived_trails USING btree (archive, trail, first_seq);


--
-- Name: audit_buy_finishes; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX audit_buy_finishes ON public.audit_events USING btree (substr(at, 1, 10), detail, at) WHERE ((session_id <> ALL (ARRAY['operator'::text, 'api'::text])) AND (step = 'coordinator.finish'::text) AND (coordinator ~~ '%/buy'::text));


--
-- Name: audit_events_legacy_attempts; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX audit_events_legacy_attempts ON public.audit_events USING btree (public.json_extract(detail, '$.attemptedUsername'::text)) WHERE (step = 'auth.signInFailed'::text);


--
-- Name: audit_events_legacy_names; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX audit_events_legacy_names ON public.audit_events USING btree (username) WHERE (username IS NOT NULL);


--
-- Name: audit_events_sign_ins; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX audit_events_sign_ins ON public.audit_events USING btree (user_id) WHERE (step = 'auth.signIn'::text);


--
-- Name: audit_experiment_exposures; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX audit_experiment_exposures ON public.audit_events USING btree ((((detail)::jsonb ->> 'experiment'::text)), session_id) WHERE (step = 'experiment.exposed'::text);


--
-- Name: console_sessions_by_operator; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX console_sessions_by_operator ON public.console_sessions USING btree (operator_id);


--
-- Name: experiments_one_running_per_point; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX experiments_one_running_per_point ON public.experiments USING btree (point) WHERE (running = 1);


--
-- Name: idempotency_keys_by_created_at; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX idempotency_keys_by_created_at ON public.idempotency_keys USING btree (created_at);


--
-- Name: sessions_by_created; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX sessions_by_created ON public.sessions USING btree (created_at, id);


--
-- Name: sessions_by_user; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX sessions_by_user ON public.sessions USING btree (user_id);


--
-- Name: sign_in_attempts_by_address; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX sign_in_attempts_by_address ON public.sign_in_attempts USING btree (address, at);


--
-- Name: sign_in_attempts_by_user; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX sign_in_attempts_by_user ON public.sign_in_attempts USING btree (username_key, at);


--
-- Name: tokens_by_user; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX tokens_by_user ON public.tokens USING btree (user_id);


--
-- Name: audit_archived_trails audit_archived_trails_no_delete; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER audit_archived_trails_no_delete BEFORE DELETE ON public.audit_archived_trails FOR EACH ROW EXECUTE FUNCTION public.refuse_change();


--
-- Name: audit_archived_trails audit_archived_trails_no_truncate; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER audit_archived_trails_no_truncate BEFORE TRUNCATE ON public.audit_archived_trails FOR EACH STATEMENT EXECUTE FUNCTION public.refuse_change();


--
-- Name: audit_archived_trails audit_archived_trails_no_update; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER audit_archived_trails_no_update BEFORE UPDATE ON public.audit_archived_trails FOR EACH ROW EXECUTE FUNCTION public.refuse_change();


--
-- Name: audit_archives audit_archives_no_delete; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER audit_archives_no_delete BEFORE DELETE ON public.audit_archives FOR EACH ROW EXECUTE FUNCTION public.refuse_change();


--
-- Name: audit_archives audit_archives_no_truncate; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER audit_archives_no_truncate BEFORE TRUNCATE ON public.audit_archives FOR EACH STATEMENT EXECUTE FUNCTION public.refuse_change();


--
-- Name: audit_archives audit_archives_no_update; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER audit_archives_no_update BEFORE UPDATE ON public.audit_archives FOR EACH ROW EXECUTE FUNCTION public.audit_archives_finish_only();


--
-- Name: audit_chain_cutover audit_chain_cutover_no_update; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER audit_chain_cutover_no_update BEFORE UPDATE ON public.audit_chain_cutover FOR EACH ROW EXECUTE FUNCTION public.refuse_change();


--
-- Name: audit_checkpoints audit_checkpoints_no_delete; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER audit_checkpoints_no_delete BEFORE DELETE ON public.audit_checkpoints FOR EACH ROW EXECUTE FUNCTION public.refuse_change();


--
-- Name: audit_checkpoints audit_checkpoints_no_truncate; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER audit_checkpoints_no_truncate BEFORE TRUNCATE ON public.audit_checkpoints FOR EACH STATEMENT EXECUTE FUNCTION public.refuse_change();


--
-- Name: audit_checkpoints audit_checkpoints_no_update; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER audit_checkpoints_no_update BEFORE UPDATE ON public.audit_checkpoints FOR EACH ROW EXECUTE FUNCTION public.refuse_change();


--
-- Name: audit_events audit_events_no_delete; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER audit_events_no_delete BEFORE DELETE ON public.audit_events FOR EACH ROW EXECUTE FUNCTION public.audit_events_archived_only();


--
-- Name: audit_events audit_events_no_truncate; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER audit_events_no_truncate BEFORE TRUNCATE ON public.audit_events FOR EACH STATEMENT EXECUTE FUNCTION public.refuse_change();


--
-- Name: audit_events audit_events_no_update; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER audit_events_no_update BEFORE UPDATE ON public.audit_events FOR EACH ROW EXECUTE FUNCTION public.audit_events_redaction_only();


--
-- Name: audit_redactions audit_redactions_no_delete; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER audit_redactions_no_delete BEFORE DELETE ON public.audit_redactions FOR EACH ROW EXECUTE FUNCTION public.audit_redactions_with_row_only();


--
-- Name: audit_redactions audit_redactions_no_truncate; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER audit_redactions_no_truncate BEFORE TRUNCATE ON public.audit_redactions FOR EACH STATEMENT EXECUTE FUNCTION public.refuse_change();


--
-- Name: audit_redactions audit_redactions_no_update; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER audit_redactions_no_update BEFORE UPDATE ON public.audit_redactions FOR EACH ROW EXECUTE FUNCTION public.refuse_change();


--
-- Name: audit_archived_trails audit_archived_trails_archive_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.audit_archived_trails
    ADD CONSTRAINT audit_archived_trails_archive_fkey FOREIGN KEY (archive) REFERENCES public.audit_archives(number);


--
-- Name: audit_redactions audit_redactions_user_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.audit_redactions
    ADD CONSTRAINT audit_redactions_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id);


--
-- Name: console_sessions console_sessions_operator_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.console_sessions
    ADD CONSTRAINT console_sessions_operator_id_fkey FOREIGN KEY (operator_id) REFERENCES public.operators(id) ON DELETE CASCADE;


--
-- Name: purchases purchases_photo_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.purchases
    ADD CONSTRAINT purchases_photo_id_fkey FOREIGN KEY (photo_id) REFERENCES public.photos(id);


--
-- Name: purchases purchases_user_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.purchases
    ADD CONSTRAINT purchases_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id);


--
-- Name: sessions sessions_user_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.sessions
    ADD CONSTRAINT sessions_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id);


--
-- Name: tokens tokens_user_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.tokens
    ADD CONSTRAINT tokens_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id);


--
-- PostgreSQL database dump complete
--

\unrestrict UBv1u5W4ZWDVkrWpYPCeZpacs6Q9WEuBOBgWZndBetwS0zYK0wtgkT2GwEkFKem

