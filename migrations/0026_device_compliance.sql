CREATE TABLE "device_compliance" (
	"device_id" uuid PRIMARY KEY NOT NULL,
	"manifest_id" uuid,
	"status" text NOT NULL,
	"name" text NOT NULL
);
--> statement-breakpoint
ALTER TABLE "device_compliance" ADD CONSTRAINT "device_compliance_device_id_devices_id_fk" FOREIGN KEY ("device_id") REFERENCES "public"."devices"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "device_compliance_status_name_id_idx" ON "device_compliance" USING btree ("status","name","device_id");--> statement-breakpoint
-- Compliance as a maintained fact (issue 20): device_compliance holds each live device's status against its type's
-- default manifest, written by the triggers below in the transaction of the write that changes it, so no writer can
-- forget it and the summary is an aggregate over one narrow table. The rules are the ones the per-request scan had:
-- no_manifest without a default manifest for the node type; else outdated when a desired component reports another
-- version, else unknown when one has reported none, else compliant; a component named by several steps is desired at
-- its last step's version.
--
-- Concurrency: a recompute first takes a shared advisory lock on each node type involved (a manifest change takes it
-- exclusively), then locks the devices' device_compliance rows in id order, and only then reads, in a new statement,
-- so under READ COMMITTED it sees whatever the transaction it waited for committed: two reports for one device, or a
-- report and a manifest change, cannot leave a status computed from a snapshot that missed the other.
--
-- The component versions each default manifest desires; also what GET /v1/firmware/compliance lists per device.
-- PL/pgSQL so that the planner does not inline it: inlined, it estimates 100 rows for each jsonb_array_elements, and
-- the inflated cost of a page's lateral join switched JIT compilation on (30 ms a page); ROWS gives a truer figure.
CREATE FUNCTION fleet_desired_components()
RETURNS TABLE (manifest_id uuid, component_id text, version text) LANGUAGE plpgsql STABLE ROWS 50 AS $$
BEGIN
  RETURN QUERY
  SELECT DISTINCT ON (m.id, comp->>'id') m.id, comp->>'id', comp->>'version'
  FROM firmware_manifests m,
    jsonb_array_elements(m.steps) WITH ORDINALITY AS s(step, si),
    jsonb_array_elements(s.step->'components') WITH ORDINALITY AS cv(comp, ci)
  WHERE m.is_default
  ORDER BY m.id, comp->>'id', si DESC, ci DESC;
END
$$;
--> statement-breakpoint
-- The status of these devices (the live ones among them) as of the calling statement's snapshot.
CREATE FUNCTION fleet_compliance_compute(ids uuid[])
RETURNS TABLE (device_id uuid, manifest_id uuid, status text, name text) LANGUAGE sql STABLE AS $$
  SELECT d.id, m.id,
    CASE WHEN m.id IS NULL THEN 'no_manifest'
         WHEN count(*) FILTER (WHERE f.version IS NOT NULL AND f.version IS DISTINCT FROM w.version) > 0 THEN 'outdated'
         WHEN count(w.component_id) FILTER (WHERE f.version IS NULL) > 0 THEN 'unknown'
         ELSE 'compliant' END,
    d.name
  FROM unnest(ids) AS i(id)
  JOIN devices d ON d.id = i.id
  LEFT JOIN firmware_manifests m ON m.is_default AND m.hardware_type = d.node_type
  LEFT JOIN fleet_desired_components() w ON w.manifest_id = m.id
  LEFT JOIN device_firmware f ON f.device_id = d.id AND f.component_id = w.component_id
  WHERE d.deleted_at IS NULL
  GROUP BY d.id, m.id
$$;
--> statement-breakpoint
-- Generic plans: planning these statements afresh for each call (a custom plan per array) cost about 1.4 ms, several
-- times the statements themselves for a one-device report. The generic plans probe the primary keys: right for a
-- report or a page, and 1.6 s for a hardware type's 57,000 devices.
CREATE FUNCTION fleet_compliance_refresh(ids uuid[]) RETURNS void LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan AS $$
BEGIN
  IF coalesce(cardinality(ids), 0) = 0 THEN
    RETURN;
  END IF;
  -- The ids are joined through unnest, which a generic plan takes for a few rows, so it probes the primary keys.
  PERFORM pg_advisory_xact_lock_shared(hashtextextended('fleet_compliance:' || t.node_type, 0))
  FROM (SELECT DISTINCT d.node_type FROM unnest(ids) AS i(id) JOIN devices d ON d.id = i.id
        WHERE d.node_type IS NOT NULL ORDER BY 1) t;
  PERFORM 1 FROM unnest(ids) AS i(id) JOIN device_compliance c ON c.device_id = i.id
  ORDER BY c.device_id FOR UPDATE OF c;
  -- A hard-deleted device's row went with it (ON DELETE CASCADE); a soft-deleted one's goes here.
  DELETE FROM device_compliance c USING unnest(ids) AS i(id), devices d
  WHERE c.device_id = i.id AND d.id = i.id AND d.deleted_at IS NOT NULL;
  -- Rows whose status stands are left alone: a report that changes nothing writes nothing here.
  INSERT INTO device_compliance (device_id, manifest_id, status, name)
  SELECT * FROM fleet_compliance_compute(ids)
  ON CONFLICT (device_id) DO UPDATE
    SET manifest_id = excluded.manifest_id, status = excluded.status, name = excluded.name
  WHERE (device_compliance.manifest_id, device_compliance.status, device_compliance.name)
    IS DISTINCT FROM (excluded.manifest_id, excluded.status, excluded.name);
END
$$;
--> statement-breakpoint
-- Statement triggers with transition tables: a workflow's page of readings (one upsert) recomputes its devices once.
CREATE FUNCTION fleet_compliance_on_device_firmware() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' THEN
    PERFORM fleet_compliance_refresh(ARRAY(SELECT device_id FROM changed UNION SELECT device_id FROM changed_old));
  ELSE
    PERFORM fleet_compliance_refresh(ARRAY(SELECT DISTINCT device_id FROM changed));
  END IF;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER device_firmware_compliance_insert AFTER INSERT ON device_firmware
  REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION fleet_compliance_on_device_firmware();
--> statement-breakpoint
CREATE TRIGGER device_firmware_compliance_update AFTER UPDATE ON device_firmware
  REFERENCING OLD TABLE AS changed_old NEW TABLE AS changed
  FOR EACH STATEMENT EXECUTE FUNCTION fleet_compliance_on_device_firmware();
--> statement-breakpoint
CREATE TRIGGER device_firmware_compliance_delete AFTER DELETE ON device_firmware
  REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION fleet_compliance_on_device_firmware();
--> statement-breakpoint
-- A transaction that sets fleet.compliance_deferred (the NetBox sync, which writes many devices in one long
-- transaction) skips the device triggers and calls fleet_compliance_refresh itself once, over sorted ids, before it
-- commits: row by row, it would hold compliance rows locked in NetBox order for minutes against the firmware reports,
-- which lock them in id order, and pay a refresh per renamed or deleted device.
CREATE FUNCTION fleet_compliance_deferred() RETURNS boolean LANGUAGE sql STABLE AS $$
  SELECT coalesce(current_setting('fleet.compliance_deferred', true), '') = 'on'
$$;
--> statement-breakpoint
CREATE FUNCTION fleet_compliance_on_device_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF fleet_compliance_deferred() THEN
    RETURN NULL;
  END IF;
  PERFORM fleet_compliance_refresh(ARRAY(SELECT id FROM changed));
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER devices_compliance_insert AFTER INSERT ON devices
  REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION fleet_compliance_on_device_insert();
--> statement-breakpoint
-- A row trigger with a WHEN clause: the frequent device updates (power, lifecycle, projections) never call it.
CREATE FUNCTION fleet_compliance_on_device_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF fleet_compliance_deferred() THEN
    RETURN NULL;
  END IF;
  PERFORM fleet_compliance_refresh(ARRAY[NEW.id]);
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER devices_compliance_update AFTER UPDATE ON devices FOR EACH ROW
  WHEN (OLD.node_type IS DISTINCT FROM NEW.node_type OR (OLD.deleted_at IS NULL) <> (NEW.deleted_at IS NULL)
    OR OLD.name <> NEW.name)
  EXECUTE FUNCTION fleet_compliance_on_device_update();
--> statement-breakpoint
-- A manifest change recomputes its hardware type's devices in one set-based pass, at commit (deferred): a default
-- swap is two updates (clear the old, set the new) and must not recompute every device twice, so a type done once
-- in a transaction is skipped after (the transaction-local setting fleet.compliance_types).
CREATE FUNCTION fleet_compliance_on_manifest() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  hw text;
  done text := coalesce(current_setting('fleet.compliance_types', true), '');
BEGIN
  FOR hw IN
    SELECT DISTINCT t FROM unnest(ARRAY[
      CASE WHEN TG_OP <> 'INSERT' THEN OLD.hardware_type END,
      CASE WHEN TG_OP <> 'DELETE' THEN NEW.hardware_type END]) AS t
    WHERE t IS NOT NULL ORDER BY 1
  LOOP
    CONTINUE WHEN position(chr(31) || hw || chr(31) IN done) > 0;
    done := done || chr(31) || hw || chr(31);
    PERFORM set_config('fleet.compliance_types', done, true);
    PERFORM pg_advisory_xact_lock(hashtextextended('fleet_compliance:' || hw, 0));
    PERFORM fleet_compliance_refresh(ARRAY(
      SELECT id FROM devices WHERE node_type = hw AND deleted_at IS NULL ORDER BY id));
  END LOOP;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE CONSTRAINT TRIGGER firmware_manifests_compliance_insert AFTER INSERT ON firmware_manifests
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (NEW.is_default)
  EXECUTE FUNCTION fleet_compliance_on_manifest();
--> statement-breakpoint
CREATE CONSTRAINT TRIGGER firmware_manifests_compliance_update AFTER UPDATE ON firmware_manifests
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
  WHEN ((OLD.is_default OR NEW.is_default) AND (OLD.is_default, OLD.hardware_type, OLD.steps)
    IS DISTINCT FROM (NEW.is_default, NEW.hardware_type, NEW.steps))
  EXECUTE FUNCTION fleet_compliance_on_manifest();
--> statement-breakpoint
CREATE CONSTRAINT TRIGGER firmware_manifests_compliance_delete AFTER DELETE ON firmware_manifests
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (OLD.is_default)
  EXECUTE FUNCTION fleet_compliance_on_manifest();
--> statement-breakpoint
INSERT INTO device_compliance (device_id, manifest_id, status, name)
SELECT * FROM fleet_compliance_compute(ARRAY(SELECT id FROM devices WHERE deleted_at IS NULL));
