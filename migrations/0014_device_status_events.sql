-- Device events (GET /v1/events) for Fleet's own status too: a lifecycle move and a condition change are device
-- changes the console and `fleetctl --watch` follow, as a power state is. Same rules as 0010: deferred constraint
-- triggers that run at commit under the advisory lock, so event ids follow commit order; payloads are ids and state.
CREATE OR REPLACE FUNCTION fleet_record_event() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  event_type text;
  event_data jsonb;
  event_id bigint;
  object_id text;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('fleet_events', 0));
  IF TG_TABLE_NAME = 'jobs' THEN
    object_id := NEW.id::text;
    event_type := CASE WHEN NEW.kind = 'firmware.campaign' THEN 'campaign' ELSE 'job' END;
    event_data := jsonb_build_object('state', NEW.state, 'kind', NEW.kind, 'parent_id', NEW.parent_id,
      'device_id', NEW.device_id, 'rack_id', NEW.rack_id, 'site_id', NEW.site_id);
  ELSIF TG_TABLE_NAME = 'device_conditions' THEN
    -- A condition belongs to its device: the event is the device's, naming the condition that changed.
    event_type := 'device';
    object_id := NEW.device_id::text;
    event_data := jsonb_build_object('condition', jsonb_build_object('type', NEW.type, 'status', NEW.status,
      'reason', NEW.reason));
  ELSE
    object_id := NEW.id::text;
    event_type := 'device';
    event_data := jsonb_build_object('power_state', NEW.power_state, 'lifecycle_state', NEW.lifecycle_state,
      'lifecycle', NEW.fleet_lifecycle, 'firmware_version', NEW.firmware_version, 'node_type', NEW.node_type,
      'rack_id', NEW.rack_id, 'site_id', NEW.site_id, 'deleted', NEW.deleted_at IS NOT NULL);
  END IF;
  INSERT INTO events (type, object_id, data) VALUES (event_type, object_id, event_data) RETURNING id INTO event_id;
  PERFORM pg_notify('fleet_events', jsonb_build_object('event_id', event_id, 'type', event_type,
    'id', object_id, 'data', event_data)::text);
  RETURN NULL;
END
$$;
--> statement-breakpoint
DROP TRIGGER devices_event_update ON devices;
--> statement-breakpoint
CREATE CONSTRAINT TRIGGER devices_event_update AFTER UPDATE ON devices DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW
  WHEN ((OLD.power_state, OLD.lifecycle_state, OLD.fleet_lifecycle, OLD.firmware_version, OLD.node_type, OLD.rack_id,
      OLD.deleted_at)
    IS DISTINCT FROM (NEW.power_state, NEW.lifecycle_state, NEW.fleet_lifecycle, NEW.firmware_version, NEW.node_type,
      NEW.rack_id, NEW.deleted_at))
  EXECUTE FUNCTION fleet_record_event();
--> statement-breakpoint
CREATE CONSTRAINT TRIGGER device_conditions_event_insert AFTER INSERT ON device_conditions DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW EXECUTE FUNCTION fleet_record_event();
--> statement-breakpoint
-- A report that changes nothing a reader shows (the same status and reason) is no event.
CREATE CONSTRAINT TRIGGER device_conditions_event_update AFTER UPDATE ON device_conditions
  DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW
  WHEN ((OLD.status, OLD.reason, OLD.message) IS DISTINCT FROM (NEW.status, NEW.reason, NEW.message))
  EXECUTE FUNCTION fleet_record_event();
