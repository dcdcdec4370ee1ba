import Foundation

/// Error-bounded admission (BY-9), the online opening-window algorithm of trajectory
/// compression (Meratnia & de By, "Spatiotemporal compression techniques for moving point
/// objects", EDBT 2004) with its window test done in O(1) by cone intersection (Williams,
/// "An efficient algorithm for the piecewise linear approximation of planar curves", CGIP
/// 8, 1978; the sector test of Sklansky & Gonzalez, Pattern Recognition 12, 1980).
///
/// The window starts at the anchor A (the last stored fix). Each later fix p with
/// |Ap| > ε allows only the directions from A whose ray passes within ε of p: the cone
/// φ ± asin(ε/|Ap|). A new fix P can end the segment A→P when its direction lies in the
/// intersection of the cones of every fix before it and it is at least as far from A as
/// the farthest constrained one (`reach`): then every window fix's perpendicular foot lies
/// on A→P and its distance is ≤ ε. Fixes within ε of A constrain nothing (A covers them).
/// If P does not fit, the previous fix Q (which did) is stored, Q becomes the anchor and P
/// opens the next window. So every accepted fix lies within ε of A→Q — exactly, not at a
/// percentile. Geometry is in the anchor's gnomonic plane, where distances never
/// undershoot the sphere's (see `GnomonicPlane`).
///
/// Latency: a fix is held until the next fix shows the path bent, and never longer than the
/// first fix timestamped `maxIntervalSeconds` after the anchor, nor past the `maxFixes`-th
/// fix of the window: that fix is stored at once (the forced store). State is O(1) — the
/// anchor, the held fix, two cone angles, the reach and a count — whatever the window size.
struct DeviationWindow: Sendable {
    /// The window cap: the `maxFixes`-th fix since the anchor is stored at once.
    static let defaultMaxFixes = 1000

    /// ε in metres; 1 mm is kept back for floating-point rounding.
    let toleranceMeters: Double
    /// Liveness: a fix at least this long (fix time) after the anchor is stored at once.
    let maxIntervalSeconds: Double
    /// The window cap.
    let maxFixes: Int
    /// The last stored fix (nil before the first fix of a session).
    private(set) var anchor: GatePoint?
    /// The latest accepted fix, not stored yet: it ends the segment if the window closes now.
    private(set) var held: Location?
    private var plane: GnomonicPlane?
    private var lo = -Double.infinity, hi = Double.infinity
    private var reach = 0.0
    /// Fixes taken into the window since the anchor.
    private(set) var count = 0

    init(toleranceMeters: Double, maxIntervalSeconds: Double, maxFixes: Int = defaultMaxFixes, anchor: GatePoint?) {
        self.toleranceMeters = toleranceMeters
        self.maxIntervalSeconds = maxIntervalSeconds
        self.maxFixes = max(2, maxFixes)
        restart(at: anchor)
    }

    private var epsilon: Double { max(0, toleranceMeters - 0.001) }

    /// The timestamp a new fix must be later than: the held fix, else the anchor.
    var latest: Date? { held?.timestamp ?? anchor?.timestamp }

    /// Starts an empty window at `anchor` (a fix stored by another path, or a resume).
    mutating func restart(at anchor: GatePoint?) {
        self.anchor = anchor
        plane = anchor.map { GnomonicPlane(latitude: $0.latitude, longitude: $0.longitude) }
        held = nil
        lo = -.infinity
        hi = .infinity
        reach = 0
        count = 0
    }

    /// Takes one accepted fix (later than `latest`); returns the fixes to store now, in order.
    /// `force` (a geofence crossing, a return to motion, a check-in) stores `fix` now, after
    /// the held fix when `fix` cannot end the current segment itself.
    mutating func offer(_ fix: Location, force: Bool = false) -> [Location] {
        var out: [Location] = []
        var p = plane?.project(latitude: fix.latitude, longitude: fix.longitude)
        if anchor != nil, !fits(p), let q = held {
            out.append(q)
            restart(at: Self.point(q))
            p = plane?.project(latitude: fix.latitude, longitude: fix.longitude)
        }
        guard let anchor, let p, fits(p) else {
            // The first fix, or one too far for the plane: it becomes the anchor itself.
            out.append(fix)
            restart(at: Self.point(fix))
            return out
        }
        if force || count + 1 >= maxFixes || fix.timestamp.timeIntervalSince(anchor.timestamp) >= maxIntervalSeconds {
            out.append(fix)
            restart(at: Self.point(fix))
        } else {
            include(p)
            held = fix
            count += 1
        }
        return out
    }

    /// Closes the window (stop, pause, configuration change): the held fix, to be stored
    /// now, becomes the anchor. Nil when nothing is held.
    mutating func flush() -> Location? {
        guard let q = held else { return nil }
        restart(at: Self.point(q))
        return q
    }

    static func point(_ l: Location) -> GatePoint {
        GatePoint(timestamp: l.timestamp, latitude: l.latitude, longitude: l.longitude)
    }

    /// Whether the segment from the anchor to `p` passes within ε of every window fix.
    private func fits(_ p: (x: Double, y: Double)?) -> Bool {
        guard let p else { return false }
        if reach == 0 { return true }  // nothing constrained yet
        guard lo <= hi, (p.x * p.x + p.y * p.y).squareRoot() >= reach else { return false }
        let theta = unwrap(atan2(p.y, p.x))
        return theta >= lo && theta <= hi
    }

    /// Narrows the cone by `p`'s own (it is inside the next segment if the window goes on).
    private mutating func include(_ p: (x: Double, y: Double)) {
        let r = (p.x * p.x + p.y * p.y).squareRoot()
        guard r > epsilon else { return }
        let half = asin(epsilon / r)
        if reach == 0 {
            let phi = atan2(p.y, p.x)
            lo = phi - half
            hi = phi + half
        } else {
            let phi = unwrap(atan2(p.y, p.x))
            lo = max(lo, phi - half)
            hi = min(hi, phi + half)
        }
        reach = max(reach, r)
    }

    /// The angle shifted by whole turns to lie within π of the cone's middle.
    private func unwrap(_ a: Double) -> Double {
        let mid = (lo + hi) / 2
        var x = a
        while x < mid - .pi { x += 2 * .pi }
        while x > mid + .pi { x -= 2 * .pi }
        return x
    }
}
