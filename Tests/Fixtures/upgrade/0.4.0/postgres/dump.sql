--
-- PostgreSQL database dump
--

\restrict 6a7ZniAP0l04ZgOa3AEDn2pRTLe6kOF4hwHhoJhN1pUQcBIMvZyLpriN4cb6UQa

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
0mwz9zh0zJVzhvBi16cx-2IMQQp6ekPVt	1	6	7939e4d7f432886486b27d6801dd32c07e56cfc063c5891c40a72521406240eb	1
operator	1	7	40a0d53d31724706446ebcd021a40d6d6fa5a9b6e5c7df4a43dc2dde038f47a6	1
\.


--
-- Data for Name: audit_archives; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.audit_archives (number, path, before, started_at, finished_at, rows, segments, rows_digest, segments_digest, prev_hash, public_key, signature, hash) FROM stdin;
1	/tmp/tmp.aAWH682XJI/archive-1.sqlite	2026-11-27T17:48:57.000Z	2026-11-27T17:48:59.219Z	2026-11-27T17:48:59.453Z	13	2	d4825479d603a42d3c1041ef6e7a526bbec3005e065ea03bf6d5473dde3b1361	14f424f1d1706fff529564055e03f2ba81eaa5f9bcdaa9a2bda82d877bf60fdf	0000000000000000000000000000000000000000000000000000000000000000	e3d966a719635b7c5d693d4704bc2c23ba9c4f3343bb20ad730b2028e40747f9	d3dba95a70cc77c4447d504d1f27778c53db94f600e4b853e09ef2edbb12066324318f50453f0c3e178caebb5e7caf6b26e5d51f1ad59c7048a1da6c47ff1f0f	d94102f8556ff568e8c201980cbe4346269739cdb60adf3758fb9182714d852e
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
1	2026-11-27T17:48:56.083Z	0000000000000000000000000000000000000000000000000000000000000000	13	[{"seq":6,"hash":"7939e4d7f432886486b27d6801dd32c07e56cfc063c5891c40a72521406240eb","trail":"0mwz9zh0zJVzhvBi16cx-2IMQQp6ekPVt"},{"seq":7,"hash":"40a0d53d31724706446ebcd021a40d6d6fa5a9b6e5c7df4a43dc2dde038f47a6","trail":"operator"}]	e3d966a719635b7c5d693d4704bc2c23ba9c4f3343bb20ad730b2028e40747f9	845d99fe30c9af77b9bac63dc52f3f6c76dbdc1905b5bf3bffa0d7feedf295a99b7a3a95432b0a659e543958220a4320c008d7b67f66ecf6b57f848ef61b580c	97a1c5e6af9e96bc7050dbdbe82d73252f1885515dcbdeb271cf6e378de1fc3d	\N
2	2026-11-27T17:49:02.298Z	97a1c5e6af9e96bc7050dbdbe82d73252f1885515dcbdeb271cf6e378de1fc3d	25	[{"seq":9,"trail":"0mwz9znnislaeaAuJkK233Bb1JBgFw_3w","hash":"082391c548107d121e6fee492e13ebc3d1799b7997631dd08aa5255937a9e8c2"},{"seq":1,"trail":"api","hash":"ccaf4e238087a600940806b2d474c0e9b3d8e0f35fdc523c596e8e6af5ec5304"},{"seq":9,"trail":"operator","hash":"9bdeea20b22dc79bc30987619bd5143c5ee575d035b49247bc6b92fc93d59159"}]	e3d966a719635b7c5d693d4704bc2c23ba9c4f3343bb20ad730b2028e40747f9	8f0893a72b18075bc77b3da6a2cdd62df32569076836505ea0f2ad32bc081ecf9c67831bc06748a97f8e4e2021a2e7261c7a9fe710be70d12eb95d3cc066380d	824665ecede17b0ef933fea59358b0713c2c36e705f5394f959fa3cdf543e9c7	\N
3	2026-11-27T17:49:02.918Z	824665ecede17b0ef933fea59358b0713c2c36e705f5394f959fa3cdf543e9c7	25	[]	e3d966a719635b7c5d693d4704bc2c23ba9c4f3343bb20ad730b2028e40747f9	521be62b4fe0bab5f7b96489263694375cb6e2587bc66fccce3ffb152a8a57a977d962c56f4013d1da3f2e2845cf3b025425d7dfdddcc21790cc48609462dc08	a0ecae450e5e935bffa1effffeaee7850067b15b99cfaf8cc6ad4c4de28af47e	\N
\.


--
-- Data for Name: audit_events; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.audit_events (id, session_id, seq, at, actor, user_id, username, coordinator, step, screen, detail, prev_hash, hash) FROM stdin;
15	api	1	2026-11-27T17:49:01.132Z	client	2	\N	\N	auth.signIn	\N	{}	0000000000000000000000000000000000000000000000000000000000000000	ccaf4e238087a600940806b2d474c0e9b3d8e0f35fdc523c596e8e6af5ec5304
16	0mwz9znnislaeaAuJkK233Bb1JBgFw_3w	1	2026-11-27T17:49:01.182Z	client	\N	\N	\N	session.start	\N	{}	0000000000000000000000000000000000000000000000000000000000000000	8a2168f0464a85d7366135848afaa7b81a4167df7a8ec508c33406f226fd1d82
17	0mwz9znnislaeaAuJkK233Bb1JBgFw_3w	2	2026-11-27T17:49:01.182Z	client	\N	\N	app	coordinator.start	\N	{"id":"app","kind":"app"}	8a2168f0464a85d7366135848afaa7b81a4167df7a8ec508c33406f226fd1d82	9eda8a31ff5d7615b7696f1b9997521f921f92e7b83f15cbb244d312363805fa
18	0mwz9znnislaeaAuJkK233Bb1JBgFw_3w	3	2026-11-27T17:49:01.182Z	client	\N	\N	app	screen.push	photos	{}	9eda8a31ff5d7615b7696f1b9997521f921f92e7b83f15cbb244d312363805fa	4b3905eee4d0087ad160d2f3da6279358c9686f278fc7a424cf14808b8aa47fa
19	0mwz9znnislaeaAuJkK233Bb1JBgFw_3w	4	2026-11-27T17:49:01.414Z	client	\N	\N	app	action	\N	{"action":"selectPhoto","photoId":3}	4b3905eee4d0087ad160d2f3da6279358c9686f278fc7a424cf14808b8aa47fa	43379306cc8be3eb7e3209093a09b7f9b6624d0667a8f7ab050254529e78164e
20	0mwz9znnislaeaAuJkK233Bb1JBgFw_3w	5	2026-11-27T17:49:01.414Z	client	\N	\N	app	screen.push	photo	{"photoId":3}	43379306cc8be3eb7e3209093a09b7f9b6624d0667a8f7ab050254529e78164e	0f18440d4b9cbe4f9d9f8598534f06e77fd039d9d96168ee27f80bbae27d052d
21	0mwz9znnislaeaAuJkK233Bb1JBgFw_3w	6	2026-11-27T17:49:01.482Z	client	\N	\N	app	action	\N	{"action":"buy"}	0f18440d4b9cbe4f9d9f8598534f06e77fd039d9d96168ee27f80bbae27d052d	9377da32e0188310c49d9dd62e0de902b83986bdbcfbeb84a30598d0511acbd6
22	0mwz9znnislaeaAuJkK233Bb1JBgFw_3w	7	2026-11-27T17:49:01.482Z	client	\N	\N	app/buy	coordinator.start	\N	{"buy.presentation":"push","id":"buy-7","kind":"buy","photoId":3,"presentation":"push"}	9377da32e0188310c49d9dd62e0de902b83986bdbcfbeb84a30598d0511acbd6	3866862d958b5f23f339586b320bef8e8da2a611ce9664c447ff528d245b4649
23	0mwz9znnislaeaAuJkK233Bb1JBgFw_3w	8	2026-11-27T17:49:01.482Z	client	\N	\N	app/buy	experiment.exposed	\N	{"experiment":"fixture-presentation","point":"buy.presentation","variant":"push"}	3866862d958b5f23f339586b320bef8e8da2a611ce9664c447ff528d245b4649	063b913addb7e1c68b63081319b887716ded6b4e4134da346474dab744093605
24	0mwz9znnislaeaAuJkK233Bb1JBgFw_3w	9	2026-11-27T17:49:01.482Z	client	\N	\N	app/buy	screen.push	signIn	{}	063b913addb7e1c68b63081319b887716ded6b4e4134da346474dab744093605	082391c548107d121e6fee492e13ebc3d1799b7997631dd08aa5255937a9e8c2
25	operator	9	2026-11-27T17:49:02.225Z	operator:root	2	\N	\N	user.erased	\N	{"auditRowsRedacted":0,"sessionsSignedOut":0,"userId":2}	61b9dd488250a6c6f6d5f50361fe7b0fefa5839eab2773b056c11aeac805bd36	9bdeea20b22dc79bc30987619bd5143c5ee575d035b49247bc6b92fc93d59159
14	operator	8	2026-11-27T17:48:58.700Z	operator:root	\N	\N	\N	photo.added	\N	{"count":1,"photoId":4}	40a0d53d31724706446ebcd021a40d6d6fa5a9b6e5c7df4a43dc2dde038f47a6	61b9dd488250a6c6f6d5f50361fe7b0fefa5839eab2773b056c11aeac805bd36
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
fixture-presentation	buy.presentation	[{"name":"push","weight":50},{"name":"modal","weight":50}]	1	\N	2026-11-27T17:48:51.141Z	\N
\.


--
-- Data for Name: funnel_marks; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.funnel_marks (day, stage, session_id) FROM stdin;
2026-11-27	1	0mwz9zh0zJVzhvBi16cx-2IMQQp6ekPVt
2026-11-27	2	0mwz9zh0zJVzhvBi16cx-2IMQQp6ekPVt
2026-11-27	1	0mwz9znnislaeaAuJkK233Bb1JBgFw_3w
2026-11-27	2	0mwz9znnislaeaAuJkK233Bb1JBgFw_3w
2026-11-27	3	0mwz9znnislaeaAuJkK233Bb1JBgFw_3w
2026-11-27	4	0mwz9znnislaeaAuJkK233Bb1JBgFw_3w
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
audit-archive	vm:25422:A99A3FF3	1970-01-01T00:00:00.000Z
session-sweep	vm:25513:HkaiddJU	1970-01-01T00:00:00.000Z
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
1	Harbour at dawn	https://photos.example.com/harbour-at-dawn.jpg	250	2026-11-27T17:48:49.053Z
2	Snow at night	https://photos.example.com/snow-at-night.jpg	250	2026-11-27T17:48:49.406Z
3	Orchard	https://photos.example.com/orchard.jpg	250	2026-11-27T17:48:49.966Z
4	After the cut	https://photos.example.com/after-the-cut.jpg	100	2026-11-27T17:48:58.700Z
\.


--
-- Data for Name: purchases; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.purchases (id, user_id, photo_id, price_cents, purchased_at, session_id) FROM stdin;
1	1	2	250	2026-11-27T17:48:50.558Z	\N
\.


--
-- Data for Name: schema_migrations; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.schema_migrations (version, name, checksum, applied_at) FROM stdin;
1	0001_initial.sql	8f24f0df9c3567dd73237997b97ff65f6c59e78cfbcfb28488a5ea1642ce84cd	2026-11-27T17:48:47.123Z
2	0002_idempotency_keys_v2.sql	b9d07d371ffd93df540d90336c39c315cb7284021cf1d001aa23361d9364f981	2026-11-27T17:48:47.177Z
3	0003_audit_chains_and_checkpoints.sql	de746089887c9d01c320e7356eb816586397b793e6914378932c357b371d1087	2026-11-27T17:48:47.205Z
4	0004_analytics_views.sql	cefa94fe2e705200869b4d67b9142bcec3c5f985d1f52a61a948e7e7be1de8e6	2026-11-27T17:48:47.233Z
5	0005_sign_in_attempts.sql	79c9117e69409a09cf12450eeb717fc64abe3bafcb2fdf273ef58699215c6b8a	2026-11-27T17:48:47.250Z
6	0006_session_trail_head.sql	35ecb0f1f4198d0709f0de399b460dc63dfecc010e8d69a5763b10ee9a243a58	2026-11-27T17:48:47.269Z
7	0007_sign_in_limits_per_address.sql	27184c0a43437bc38ea1dd3a7a606b9bf5b8d1b7e82cc9f5766802e8ea8f9efc	2026-11-27T17:48:47.284Z
8	0008_action_statement_refusal.sql	5c663840af004e6356ad2dab0a79ea9f91a23bddd0ef24548a73ade549bb3572	2026-11-27T17:48:47.303Z
9	0009_operators.sql	08a8882fb1f53799a231446391fb677618c7d7132055b6b773d0f3f3f57ddab6	2026-11-27T17:48:47.310Z
10	0010_session_columns.sql	8fb72ec207c1c7781c89d2351a07bfca354118bbb31a2d32db189994f9b7db47	2026-11-27T17:48:47.330Z
11	0011_erasure.sql	f68036eba9f2b240ae506f09f8c6ee2e008b28e87810e4ba803bc767f26001ac	2026-11-27T17:48:47.365Z
12	0012_sessions_end.sql	0fa7b39af3b58693e173bee729a899dbc791461ba03cf792609b7d2d2a032f65	2026-11-27T17:48:47.414Z
13	0013_audit_archives.sql	1a2c7a9dbe20fbf1022fcef0f33f776c26e924824c7b0a61277e44c6fbb17d24	2026-11-27T17:48:47.437Z
14	0014_session_secrets.sql	0cef2c3f285828e9bd9fc7e077a659db459e8e9fdba5528761301d5ee1125c7b	2026-11-27T17:48:47.494Z
15	0015_audit_key_rotation.sql	1fb811f29dd53d121f6d67d5923c2026abda2f253ac7e950bfa276468b22abb9	2026-11-27T17:48:47.511Z
16	0016_experiments.sql	8e1847ecf73ffd71b501c28f99af9e9f71ba2b89a4ecf2c4e01bd80a34964a43	2026-11-27T17:48:47.527Z
\.


--
-- Data for Name: sessions; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.sessions (id, version, state, user_id, created_at, updated_at, trail_seq, trail_hash, layout, top_screen, token_id, photo_ids, ended_at, secret_hash) FROM stdin;
0mwz9znnislaeaAuJkK233Bb1JBgFw_3w	3	{"coordinators":{"children":[{"children":[],"id":"buy-7","initialDepth":2,"kind":"buy","photoId":3,"presentation":"push","stackIndex":0,"variants":{"buy.presentation":"push"}}],"id":"app","kind":"app"},"experiments":[{"experiment":"fixture-presentation","variant":"push"}],"stacks":[{"presentation":"root","presenter":"app","screens":[{"owner":"app","screen":"photos"},{"owner":"app","photoId":3,"screen":"photo"},{"owner":"buy-7","screen":"signIn"}]}],"top":{"actions":["submit","cancel","back"],"screen":"signIn"}}	\N	2026-11-27T17:49:01.182Z	2026-11-27T17:49:01.482Z	9	082391c548107d121e6fee492e13ebc3d1799b7997631dd08aa5255937a9e8c2	stack	signIn	\N	{3}	\N	36f4c517ff192cd0712ae5a7bb8c8ef9061f7593d88e3845520e459ff66eae24
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
1	alice	$2b$04$s4/wAXpoGCel/ugCbg2L6udYq8N7idFfNen26qsaXgOY.WfkuioMS	2026-11-27T17:48:47.947Z	fOQKE0rnp2jFdibE55-7q_Psfjg6iKlg68Oxo_j_qZw	\N
2	erased:2		2026-11-27T17:48:48.527Z	\N	2026-11-27T17:49:02.225Z
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

\unrestrict 6a7ZniAP0l04ZgOa3AEDn2pRTLe6kOF4hwHhoJhN1pUQcBIMvZyLpriN4cb6UQa

