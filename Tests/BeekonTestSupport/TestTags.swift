import Foundation
import Testing

/// The tags of this repository's slow suites. Tag a suite and make it skippable with the
/// same name: `@Suite(.tags(.chaos), .skippable(.chaos))`.
///
/// `BEEKON_SKIP_TAGS=chaos,postgres,gpsd,fuzz,slow scripts/test.sh` runs the fast subset;
/// without the variable everything runs (CI). Xcode's test navigator filters by the tags too.
extension Tag {
    /// Fault injection with real processes: killed agents and servers, lost answers, storms.
    @Tag public static var chaos: Self
    /// Needs a PostgreSQL cluster (started by the test from Debian's `postgresql`).
    @Tag public static var postgres: Self
    /// Needs gpsd and gpsfake (Debian's `gpsd`, `gpsd-clients`).
    @Tag public static var gpsd: Self
    /// Seeded fuzzers (`scripts/fuzz.sh` runs them at scale).
    @Tag public static var fuzz: Self
    /// Takes more than a few seconds of wall time for another reason (real-time replays, real processes).
    @Tag public static var slow: Self
}

/// Which tagged suites a run skips.
public enum TestSelection {
    /// The tag names listed in `BEEKON_SKIP_TAGS` (comma-separated, case-insensitive).
    public static let skippedNames: Set<String> = Set(
        (ProcessInfo.processInfo.environment["BEEKON_SKIP_TAGS"] ?? "")
            .split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }.filter { !$0.isEmpty })

    /// Whether suites tagged `name` are skipped in this run.
    public static func skips(_ name: SkippableTag) -> Bool { skippedNames.contains(name.rawValue) }
}

/// The tags a run can skip, by the name `BEEKON_SKIP_TAGS` uses.
public enum SkippableTag: String, Sendable, CaseIterable {
    case chaos, postgres, gpsd, fuzz, slow
}

extension Trait where Self == ConditionTrait {
    /// Disables the suite or test when `BEEKON_SKIP_TAGS` names any of `tags`.
    public static func skippable(_ tags: SkippableTag...) -> Self {
        let skipped = tags.filter(TestSelection.skips).map(\.rawValue)
        return .disabled(if: !skipped.isEmpty, "BEEKON_SKIP_TAGS skips '\(skipped.joined(separator: ","))'")
    }
}
