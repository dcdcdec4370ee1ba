// The wire enums (Trigger, Motion, Activity, Quality, GeofenceTransition) are part of the SDK's API.
@_exported import BeekonWire
