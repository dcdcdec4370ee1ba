// The wire enums that appear in the SDK's own types (`Location`, `GeofenceEvent`) are part
// of its API; the rest of BeekonWire (envelope, writer, decoder, timestamps, UUIDv7) is the
// wire format shared with the server, imported explicitly by whoever needs it.
@_exported import enum BeekonWire.Activity
@_exported import enum BeekonWire.BeekonVersion
@_exported import enum BeekonWire.GeofenceTransition
@_exported import enum BeekonWire.Motion
@_exported import enum BeekonWire.Quality
@_exported import enum BeekonWire.Trigger
