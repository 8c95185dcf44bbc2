# Bulk-loads a planned fleet (JSON from layout.ts) into NetBox through its own ORM.
# Run by tools/netbox/run-script.sh inside NetBox's Django environment. Used where the
# REST API is too slow to create tens of thousands of objects (benchmarks); bulk_create
# writes no change-log entries, so syncs of this data are full syncs, as intended.
import json
import os

from django.contrib.contenttypes.models import ContentType
from django.db import transaction
from netaddr import IPNetwork

from core.models import ObjectType
from dcim.models import Device, DeviceRole, DeviceType, Interface, MACAddress, Manufacturer, Rack, RackType, Site
from extras.models import CustomField
from ipam.models import IPAddress

plan = json.load(open(os.environ["FLEET_PLAN"]))
profile = os.environ.get("FLEET_MANAGEMENT_PROFILE", "redfish")
credential_ref = os.environ.get("FLEET_CREDENTIAL_REF", "bmc/default")
nvue_port = os.environ.get("FLEET_NVUE_PORT")
nvos_ssh_port = os.environ.get("FLEET_NVOS_SSH_PORT")


def custom_fields(d):
    fields = {"fleet_management_profile": profile, "fleet_credential_ref": credential_ref}
    if d["kind"] == "switch" and nvue_port and nvos_ssh_port:
        fields.update(fleet_nvos_url=f'http://{d["ip"]}:{nvue_port}', fleet_nvos_ssh=f'{d["ip"]}:{nvos_ssh_port}')
    return fields

BATCH = 2000

with transaction.atomic():
    makers = {}
    for slug, name in [("nvidia", "NVIDIA"), ("liteon", "LITE-ON"), ("delta", "Delta Electronics")]:
        makers[slug], _ = Manufacturer.objects.get_or_create(slug=slug, defaults={"name": name})
    roles = {}
    for slug, name, color in [("compute-tray", "Compute tray", "4caf50"), ("nvlink-switch-tray", "NVLink switch tray", "2196f3"), ("power-shelf", "Power shelf", "ff9800")]:
        roles[slug] = DeviceRole.objects.filter(slug=slug).first() or DeviceRole.objects.create(slug=slug, name=name, color=color)
    types = {}
    for kind, fam, vendor, model in [
        ("compute", "gb200", "nvidia", "GB200 NVL72 Compute Tray"), ("compute", "gb300", "nvidia", "GB300 NVL72 Compute Tray"),
        ("switch", "gb200", "nvidia", "GB200 NVL72 NVLink Switch Tray"), ("switch", "gb300", "nvidia", "GB300 NVL72 NVLink Switch Tray"),
        ("powershelf", "gb200", "liteon", "GB200 NVL72 Power Shelf (LITE-ON)"), ("powershelf", "gb200", "delta", "GB200 NVL72 Power Shelf (Delta)"),
        ("powershelf", "gb300", "liteon", "GB300 NVL72 Power Shelf (LITE-ON)"), ("powershelf", "gb300", "delta", "GB300 NVL72 Power Shelf (Delta)"),
    ]:
        slug = f"{kind}-{fam}-{vendor}"
        types[slug], _ = DeviceType.objects.get_or_create(slug=slug, defaults={"model": model, "manufacturer": makers[vendor], "u_height": 1, "is_full_depth": True})
    rack_types = {}
    for key, model in [("gb200_nvl72", "GB200 NVL72"), ("gb300_nvl72", "GB300 NVL72")]:
        rack_types[key], _ = RackType.objects.get_or_create(
            slug=key.replace("_", "-"), defaults={"model": model, "manufacturer": makers["nvidia"], "form_factor": "4-post-cabinet", "width": 19, "u_height": 48}
        )
    device_ot = ObjectType.objects.get_for_model(Device)
    for name, label in [
        ("fleet_management_profile", "Fleet management profile"), ("fleet_credential_ref", "Fleet credential reference"),
        ("fleet_nvos_url", "Fleet NVOS NVUE URL"), ("fleet_nvos_ssh", "Fleet NVOS SSH endpoint"),
        ("fleet_nvos_credential_ref", "Fleet NVOS credential reference"), ("fleet_nvos_host_key", "Fleet NVOS SSH host key"),
        ("fleet_redfish_system_id", "Fleet Redfish ComputerSystem id"),
    ]:
        cf, created = CustomField.objects.get_or_create(name=name, defaults={"label": label, "type": "text"})
        cf.object_types.add(device_ot)

    # Sites already there are kept, so a plan can add racks to them (a fleet grown in stages).
    existing = {s.slug: s for s in Site.objects.filter(slug__in=[s["slug"] for s in plan["sites"]])}
    created = Site.objects.bulk_create([Site(slug=s["slug"], name=s["name"], status="active") for s in plan["sites"] if s["slug"] not in existing])
    sites = {**existing, **{s.slug: s for s in created}}
    racks = Rack.objects.bulk_create(
        [Rack(name=r["name"], site=sites[r["site"]], status="active", rack_type=rack_types[r["type"]], u_height=48, width=19) for r in plan["racks"]], batch_size=BATCH
    )
    rack_of = {(r.site.slug, r.name): r for r in racks}
    role_of = {"compute": "compute-tray", "switch": "nvlink-switch-tray", "powershelf": "power-shelf"}
    devices = Device.objects.bulk_create(
        [
            Device(
                name=d["name"], site=sites[d["site"]], rack=rack_of[(d["site"], d["rack"])], position=d["position"], face="front",
                role=roles[role_of[d["kind"]]], device_type=types[f'{d["kind"]}-{d["family"]}-{d["vendor"]}'], serial=d["serial"], status="active",
                custom_field_data=custom_fields(d),
            )
            for d in plan["devices"]
        ],
        batch_size=BATCH,
    )
    ifaces = Interface.objects.bulk_create([Interface(device=dev, name="bmc", type="1000base-t", mgmt_only=True) for dev in devices], batch_size=BATCH)
    iface_ct = ContentType.objects.get_for_model(Interface)
    macs = MACAddress.objects.bulk_create(
        [MACAddress(mac_address=d["mac"], assigned_object_type=iface_ct, assigned_object_id=i.pk) for d, i in zip(plan["devices"], ifaces)], batch_size=BATCH
    )
    for i, m in zip(ifaces, macs):
        i.primary_mac_address = m
    Interface.objects.bulk_update(ifaces, ["primary_mac_address"], batch_size=BATCH)
    ips = IPAddress.objects.bulk_create(
        [IPAddress(address=IPNetwork(f'{d["ip"]}/32'), status="active", assigned_object_type=iface_ct, assigned_object_id=i.pk) for d, i in zip(plan["devices"], ifaces)],
        batch_size=BATCH,
    )
    for dev, ip in zip(devices, ips):
        dev.oob_ip = ip
    Device.objects.bulk_update(devices, ["oob_ip"], batch_size=BATCH)

print(json.dumps({"sites": len(sites), "racks": len(racks), "devices": len(devices), "ips": len(ips)}))
