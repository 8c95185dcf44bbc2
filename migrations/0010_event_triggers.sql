-- The live-update feed behind GET /v1/events (drizzle-kit cannot express triggers, hence this custom migration).
--
-- Every change of a job (campaign jobs are typed 'campaign': a campaign's state lives on its job row; the campaigns
-- table is written once, in the job's transaction, so it needs no trigger of its own) or of a device's power state,
-- lifecycle or projection fields writes one `events` row and NOTIFYs fleet_events with it: the hub holds one LISTEN
-- connection and fans the rows out to its clients, and a client that reconnects with Last-Event-ID N is replayed
-- `id > N` from the table.
--
-- That replay is only correct if ids follow commit order: a bigserial handed out mid-transaction does not (a long
-- transaction could commit id 10 after id 11 was delivered, and a client resuming from 11 would never see 10). So
-- the triggers are deferred constraint triggers, run at commit, and take a transaction advisory lock before they
-- draw ids: transactions that write events commit one at a time from that point on, holding the lock only for the
-- few inserts at their end. Payloads are ids and state only; clients read bodies from the API.
CREATE FUNCTION fleet_record_event() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  event_type text;
  event_data jsonb;
  event_id bigint;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('fleet_events', 0));
  IF TG_TABLE_NAME = 'jobs' THEN
    event_type := CASE WHEN NEW.kind = 'firmware.campaign' THEN 'campaign' ELSE 'job' END;
    event_data := jsonb_build_object('state', NEW.state, 'kind', NEW.kind, 'parent_id', NEW.parent_id,
      'device_id', NEW.device_id, 'rack_id', NEW.rack_id, 'site_id', NEW.site_id);
  ELSE
    event_type := 'device';
    event_data := jsonb_build_object('power_state', NEW.power_state, 'lifecycle_state', NEW.lifecycle_state,
      'firmware_version', NEW.firmware_version, 'node_type', NEW.node_type, 'rack_id', NEW.rack_id,
      'site_id', NEW.site_id, 'deleted', NEW.deleted_at IS NOT NULL);
  END IF;
  INSERT INTO events (type, object_id, data) VALUES (event_type, NEW.id::text, event_data) RETURNING id INTO event_id;
  PERFORM pg_notify('fleet_events', jsonb_build_object('event_id', event_id, 'type', event_type,
    'id', NEW.id, 'data', event_data)::text);
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE CONSTRAINT TRIGGER jobs_event_insert AFTER INSERT ON jobs DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW EXECUTE FUNCTION fleet_record_event();
--> statement-breakpoint
-- Progress and the stage timeline count: the web UI shows a rack sequence's stages as they complete.
CREATE CONSTRAINT TRIGGER jobs_event_update AFTER UPDATE ON jobs DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW
  WHEN ((OLD.state, OLD.progress, OLD.timeline, OLD.result, OLD.error)
    IS DISTINCT FROM (NEW.state, NEW.progress, NEW.timeline, NEW.result, NEW.error))
  EXECUTE FUNCTION fleet_record_event();
--> statement-breakpoint
CREATE CONSTRAINT TRIGGER devices_event_insert AFTER INSERT ON devices DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW EXECUTE FUNCTION fleet_record_event();
--> statement-breakpoint
CREATE CONSTRAINT TRIGGER devices_event_update AFTER UPDATE ON devices DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW
  WHEN ((OLD.power_state, OLD.lifecycle_state, OLD.firmware_version, OLD.node_type, OLD.rack_id, OLD.deleted_at)
    IS DISTINCT FROM (NEW.power_state, NEW.lifecycle_state, NEW.firmware_version, NEW.node_type, NEW.rack_id,
      NEW.deleted_at))
  EXECUTE FUNCTION fleet_record_event();
