import Foundation
import PostgresTestCluster
import Testing

// The server package's copy of the root package's Tests/BeekonTestSupport (a test-only
// target cannot cross packages): the same tag names and the same BEEKON_SKIP_TAGS switch,
// so one variable selects the fast subset of both packages. PostgreSQL cases follow the
// switch through `PostgresCluster.skipped`.
extension Tag {
    /// Fault injection with real processes: killed agents and servers, lost answers, storms.
    @Tag static var chaos: Self
    /// Needs a PostgreSQL cluster.
    @Tag static var postgres: Self
    /// Seeded fuzzers (`scripts/fuzz.sh` runs them at scale).
    @Tag static var fuzz: Self
    /// Takes more than a few seconds of wall time (real processes, real-time replays).
    @Tag static var slow: Self
    /// Drives a real headless browser (Debian `chromium`).
    @Tag static var browser: Self
}

/// The tags a run can skip, by the names `BEEKON_SKIP_TAGS` uses.
enum SkippableTag: String, Sendable {
    case chaos, postgres, fuzz, slow, browser

    /// Whether `BEEKON_SKIP_TAGS` (comma-separated) names this tag.
    var isSkipped: Bool { PostgresCluster.skippedTags.contains(rawValue) }
}

extension Trait where Self == ConditionTrait {
    /// Disables the suite or test when `BEEKON_SKIP_TAGS` names any of `tags`.
    static func skippable(_ tags: SkippableTag...) -> Self {
        let skipped = tags.filter(\.isSkipped).map(\.rawValue)
        return .disabled(if: !skipped.isEmpty, "BEEKON_SKIP_TAGS skips '\(skipped.joined(separator: ","))'")
    }
}
