import BeekonPrimitives
import Foundation
import Testing
@testable import Beekon
import BeekonWire
import BeekonSources
import BeekonTesting

/// Privacy blur and zones (SPEC BY-4) as property tests over random positions and every
/// real track: honest rounding, stable snapping, zones never upload their fixes' own values.
@Suite("Privacy filter (BY-4)") struct PrivacyFilterTests {
    static func wire(_ lat: Double, _ lon: Double, accuracy: Double? = 5, speed: Double? = 1.4, bearing: Double? = 90) -> WireLocation {
        WireLocation(
            id: UUID(), timestamp: WireTimestamp(Date(timeIntervalSince1970: 1_700_000_000)), latitude: lat, longitude: lon,
            accuracy: accuracy, speed: speed, bearing: bearing, altitude: 12.5)
    }

    /// The blur's three promises for one position: within the radius, a fixed point of the
    /// snap (no information finer than the cell survives), accuracy at least the radius.
    static func checkBlur(_ lat: Double, _ lon: Double, radius: Double, filter: PrivacyFilter) -> String? {
        guard let out = filter.apply(wire(lat, lon)) else { return "withheld without a zone" }
        let d = Geodesy.distance(lat, lon, out.latitude, out.longitude)
        if d > radius { return "(\(lat), \(lon)) moved \(d) m > \(radius) m" }
        let again = PrivacyFilter.snap(latitude: out.latitude, longitude: out.longitude, cell: radius)
        if again != (out.latitude, out.longitude) { return "(\(lat), \(lon)) → \(out.latitude), \(out.longitude) is not a grid point" }
        if (out.accuracy ?? 0) < radius { return "accuracy \(String(describing: out.accuracy)) below \(radius)" }
        // Rounding is honest: the uploaded digits are those of a tenth of the cell at most.
        let digits = max(0, Int((-log10(radius / PrivacyFilter.metersPerDegree / 10)).rounded(.up)))
        let scale = pow(10, Double(digits))
        if (out.latitude * scale).rounded() / scale != out.latitude { return "latitude \(out.latitude) has more than \(digits) decimals" }
        return nil
    }

    @Test("BY-4: random positions blur within the radius, onto stable grid points", arguments: [10.0, 100, 200, 1000, 25_000])
    func randomPositions(radius: Double) {
        var rng = SeededRandom(seed: 16 + UInt64(radius))
        let filter = PrivacyFilter(config: PrivacyConfig(blurRadiusMeters: radius))
        var failures: [String] = []
        for _ in 0..<20_000 {
            let lat = Double.random(in: -85...85, using: &rng)
            let lon = Double.random(in: -179.9...179.9, using: &rng)
            if let f = Self.checkBlur(lat, lon, radius: radius, filter: filter) { failures.append(f) }
            // Stable: a point a few metres away in the same cell maps to the same output.
            let near = Self.wire(lat + 1e-6, lon)
            let a = filter.apply(Self.wire(lat, lon))!
            let b = filter.apply(near)!
            let sameCell =
                PrivacyFilter.snap(latitude: lat, longitude: lon, cell: radius)
                == PrivacyFilter.snap(latitude: lat + 1e-6, longitude: lon, cell: radius)
            if sameCell, (a.latitude, a.longitude) != (b.latitude, b.longitude) { failures.append("unstable at \(lat), \(lon)") }
        }
        #expect(failures.isEmpty, "\(failures.count) failures, e.g. \(failures.prefix(3))")
    }

    @Test("BY-4: every fix of every real track blurs honestly; a stationary stretch uploads one point", arguments: SharedData.gpxFiles)
    func realTracks(file: String) throws {
        let fixes = try GPXReader.read(contentsOf: SharedData.url(file)).fixes
        try #require(fixes.count > 100)
        for radius in [50.0, 200] {
            let filter = PrivacyFilter(config: PrivacyConfig(blurRadiusMeters: radius))
            let failures = fixes.compactMap { Self.checkBlur($0.latitude, $0.longitude, radius: radius, filter: filter) }
            #expect(failures.isEmpty, "\(file) r=\(radius): \(failures.prefix(3))")
            // Far fewer distinct uploaded points than fixes: snapping does not draw a cloud.
            let points = Set(
                fixes.compactMap { f in filter.apply(Self.wire(f.latitude, f.longitude)).map { "\($0.latitude),\($0.longitude)" } })
            #expect(points.count < fixes.count / 3, "\(file) r=\(radius): \(points.count) points for \(fixes.count) fixes")
        }
    }

    @Test("BY-4: a fix inside a zone uploads the zone's centre and id only, or nothing", arguments: SharedData.gpxFiles)
    func zonesOnRealTracks(file: String) throws {
        let fixes = try GPXReader.read(contentsOf: SharedData.url(file)).fixes
        let mid = fixes[fixes.count / 2]
        let home = PrivacyZone(id: "home", latitude: mid.latitude, longitude: mid.longitude, radiusMeters: 150)
        let work = PrivacyZone(id: "work", latitude: fixes[0].latitude, longitude: fixes[0].longitude, radiusMeters: 100, action: .withhold)
        let filter = PrivacyFilter(config: PrivacyConfig(blurRadiusMeters: 100, zones: [home, work]))
        var inside = 0
        var withheld = 0
        for f in fixes {
            let out = filter.apply(Self.wire(f.latitude, f.longitude))
            if home.contains(latitude: f.latitude, longitude: f.longitude) {
                inside += 1
                let o = try #require(out)
                #expect(o.latitude == home.latitude && o.longitude == home.longitude && o.privacyZone == "home")
                #expect(o.speed == nil && o.bearing == nil && o.altitude == nil && (o.accuracy ?? 0) >= 150)
            } else if work.contains(latitude: f.latitude, longitude: f.longitude) {
                withheld += 1
                #expect(out == nil)
            } else {
                let o = try #require(out)
                #expect(o.privacyZone == nil)
                #expect(Geodesy.distance(f.latitude, f.longitude, o.latitude, o.longitude) <= 100)
            }
        }
        #expect(inside > 0 && withheld > 0, "\(file): \(inside) inside home, \(withheld) withheld")
    }

    @Test("BY-4: the wire carries privacy_zone and decodes it back")
    func wireRoundTrip() throws {
        var l = Self.wire(1, 2)
        l.privacyZone = "home"
        let json = String(decoding: WireJSONWriter.encode(l), as: UTF8.self)
        #expect(json.contains("\"privacy_zone\":\"home\""))
        let env = WireEnvelope(
            batchId: UUID(), sessionId: UUID(), sentAt: l.timestamp,
            device: WireDevice(installId: UUID(), platform: "linux", sdkVersion: "1"), locations: [l])
        let decoded = try WireEnvelope.decode(WireJSONWriter.encode(env))
        #expect(decoded.locations.first?.privacyZone == "home")
    }

    @Test("BY-4: bad privacy configuration is a one-line error naming the field")
    func validation() {
        #expect(throws: BeekonError.self) { try PrivacyConfig(blurRadiusMeters: 1).validate() }
        #expect(throws: BeekonError.self) {
            try PrivacyConfig(zones: [PrivacyZone(id: "", latitude: 0, longitude: 0, radiusMeters: 100)]).validate()
        }
        #expect(throws: BeekonError.self) {
            try PrivacyConfig(zones: [
                PrivacyZone(id: "a", latitude: 0, longitude: 0, radiusMeters: 100),
                PrivacyZone(id: "a", latitude: 1, longitude: 1, radiusMeters: 100),
            ]).validate()
        }
        #expect((try? PrivacyConfig(blurRadiusMeters: 100).validate()) != nil)
    }
}
