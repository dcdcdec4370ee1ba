import Beekon

/// The fixes read from a track file, in file order, with what was skipped.
public struct TrackReadResult: Sendable, Hashable {
    /// The fixes, in file order (timestamps may go backwards or repeat; the SDK's gate handles that).
    public var fixes: [RawFix]
    /// Counts and messages about the records that did not become fixes.
    public var diagnostics: TrackDiagnostics

    /// Creates a result.
    public init(fixes: [RawFix], diagnostics: TrackDiagnostics) {
        self.fixes = fixes
        self.diagnostics = diagnostics
    }
}
