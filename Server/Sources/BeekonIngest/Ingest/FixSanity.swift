import BeekonWire

/// The server's sanity bounds on what a device reports (issue 50): values no device can
/// measure are refused with 422, like a schema violation, instead of being stored (`accuracy`
/// 1e308 and a fix in year 0001 were). The envelope's schema leaves these numbers open (it is
/// the wire format, shared with the SDK); this is the reference server's policy, documented in
/// `openapi.json` (the ingest route's 422) and Server/README.md. Far-future times are stored
/// and handled by ``FixClock``.
enum FixSanity {
    /// Horizontal accuracy, metres: a coarse network position is a few kilometres.
    static let maxAccuracy = 100_000.0
    /// Speed, m/s (3,600 km/h: faster than any airliner); a negative speed means "unknown" on
    /// some platforms and is sent as no speed at all.
    static let speed = 0.0...1_000.0
    /// Altitude, metres: below the deepest dry land (Dead Sea shore, -430 m) with room for
    /// error, up to the edge of space.
    static let altitude = -2_000.0...100_000.0
    /// The earliest fix or event time: 2000-01-01T00:00:00.000Z (a device clock reset to 1970,
    /// or a made-up year 1).
    static let earliestMillis: Int64 = 946_684_800_000

    /// The first value of `envelope` outside the bounds, as (field path, what it must be); nil
    /// when every value is plausible.
    static func problem(_ envelope: WireEnvelope) -> (path: String, reason: String)? {
        for (i, l) in envelope.locations.enumerated() {
            let p = "locations[\(i)]"
            if let a = l.accuracy, a > maxAccuracy { return ("\(p).accuracy", "must be at most 100000 metres") }
            if let s = l.speed, !speed.contains(s) {
                return ("\(p).speed", "must be within 0...1000 m/s (omit it when unknown)")
            }
            if let a = l.altitude, !altitude.contains(a) { return ("\(p).altitude", "must be within -2000...100000 metres") }
            if l.timestamp.millis < earliestMillis { return ("\(p).timestamp", tooEarly) }
        }
        for (i, g) in envelope.geofenceEvents.enumerated() where g.timestamp.millis < earliestMillis {
            return ("geofence_events[\(i)].timestamp", tooEarly)
        }
        for (i, e) in envelope.proximityEvents.enumerated() where e.timestamp.millis < earliestMillis {
            return ("proximity_events[\(i)].timestamp", tooEarly)
        }
        return nil
    }

    private static let tooEarly = "must not be before 2000-01-01T00:00:00.000Z"
}
