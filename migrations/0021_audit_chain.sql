-- The append-only, hash-chained audit log (docs/security.md, "Audit log"); drizzle-kit cannot express triggers.
--
-- Each row's hash is sha256 over its canonical text: a jsonb array of its fields and the previous row's hash
-- (jsonb's text form is canonical: keys ordered, spacing fixed). The chain's head (the last id and hash) is one row
-- of audit_chain_head; the insert trigger locks it (SELECT ... FOR UPDATE), gives the new row the next id, chains it
-- and moves the head, so concurrent writers (any number of hub processes) line up on that row lock and the chain stays
-- one line in commit order. The lock is held to the end of the writing transaction: audited writes commit one at a
-- time from their audit insert on. Under READ COMMITTED a waiter reads the head its predecessor committed; under a
-- stricter isolation it fails with a serialization error rather than fork the chain.
CREATE FUNCTION fleet_audit_canonical(a audit_log) RETURNS text LANGUAGE sql STABLE AS $$
  SELECT jsonb_build_array(a.id, to_char(a.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), a.actor, a.role,
    a.action, a.target, a.request_id, a.outcome, a.status_code, a.job_id, a.details, a.prev_hash)::text
$$;
--> statement-breakpoint
CREATE FUNCTION fleet_audit_hash(a audit_log) RETURNS text LANGUAGE sql STABLE AS $$
  SELECT encode(sha256(convert_to(fleet_audit_canonical(a), 'UTF8')), 'hex')
$$;
--> statement-breakpoint
CREATE TABLE audit_chain_head (
  one boolean PRIMARY KEY DEFAULT true CHECK (one),
  last_id bigint NOT NULL,
  last_hash text NOT NULL
);
--> statement-breakpoint
-- Rows written before the chain existed are chained in id order, from a genesis hash of 64 zeros.
DO $$
DECLARE
  r audit_log;
  prev text := repeat('0', 64);
  last bigint := 0;
BEGIN
  FOR r IN SELECT * FROM audit_log ORDER BY id LOOP
    r.prev_hash := prev;
    prev := fleet_audit_hash(r);
    last := r.id;
    UPDATE audit_log SET prev_hash = r.prev_hash, hash = prev WHERE id = r.id;
  END LOOP;
  INSERT INTO audit_chain_head (last_id, last_hash) VALUES (last, prev);
END
$$;
--> statement-breakpoint
CREATE FUNCTION fleet_audit_chain() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  head audit_chain_head;
BEGIN
  SELECT * INTO head FROM audit_chain_head FOR UPDATE;
  NEW.id := head.last_id + 1;
  NEW.prev_hash := head.last_hash;
  NEW.hash := fleet_audit_hash(NEW);
  UPDATE audit_chain_head SET last_id = NEW.id, last_hash = NEW.hash;
  RETURN NEW;
END
$$;
--> statement-breakpoint
CREATE TRIGGER audit_log_chain BEFORE INSERT ON audit_log FOR EACH ROW EXECUTE FUNCTION fleet_audit_chain();
--> statement-breakpoint
CREATE FUNCTION fleet_audit_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- The head moves only under the audit insert trigger (one trigger level deeper).
  IF TG_TABLE_NAME = 'audit_chain_head' AND TG_OP = 'UPDATE' AND pg_trigger_depth() > 1 THEN
    RETURN NEW;
  END IF;
  RAISE EXCEPTION '% refused on %: the audit log is append-only', TG_OP, TG_TABLE_NAME USING ERRCODE = 'insufficient_privilege';
END
$$;
--> statement-breakpoint
CREATE TRIGGER audit_log_append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON audit_log
  FOR EACH STATEMENT EXECUTE FUNCTION fleet_audit_refuse();
--> statement-breakpoint
CREATE TRIGGER audit_chain_head_guard BEFORE UPDATE OR DELETE ON audit_chain_head
  FOR EACH ROW EXECUTE FUNCTION fleet_audit_refuse();
--> statement-breakpoint
CREATE TRIGGER audit_chain_head_truncate BEFORE TRUNCATE ON audit_chain_head
  FOR EACH STATEMENT EXECUTE FUNCTION fleet_audit_refuse();
