import Beekon
import BeekonTestSupport
import BeekonTesting
import Foundation
import Testing

// The Swift snippets of the reference documents the product was specified from, kept
// compiling against the package (the way ReadmeQuickStartTests keeps the README's).
// Provenance: the reference set's "Lifecycle & states" (001) and "Sync & your backend"
// (002) pages; their Kotlin, Dart and TypeScript twins are not Swift. Not included:
// - "Background execution" (000): `CLLocationUpdate.liveUpdates(LiveUpdateConfiguration)
//   + CLBackgroundActivitySession …` and `CLLocationManager .startUpdatingLocation()
//   .allowsBackgroundLocationUpdates = true …` are diagrams of API names, not Swift
//   (`+` between types, assignments inside a method chain);
// - "Extending background ranging time" (003) is Objective-C.
// The line breaks lost in the reference's flattened text are restored at the snippets'
// `//` comments; otherwise the code is verbatim except where noted.

/// 001 "Observing state". Invalid Swift as published, in two ways: SwiftUI's `Text(…)` is a
/// view value used as a statement inside a `Task` (outside a view builder it builds nothing,
/// and SwiftUI does not exist on Linux), and `await` before `Beekon.shared.state` awaits
/// nothing (`state` is a nonisolated property; the compiler warns). Compiled here with a
/// local `Text` that records the label and without that one `await`, and reading `beekon`
/// (by default `Beekon.shared`, as published) so that a test can hand it an instance of its
/// own: on Apple platforms the first subscription to `Beekon.shared` opens the app's database
/// in Application Support and starts its launch decision (CoreLocation, UIKit's lifecycle),
/// which neither a developer's Mac nor a hostless simulator test target may have done to it.
@discardableResult
func referenceObservingState(
    from beekon: Beekon = Beekon.shared, _ Text: @escaping @Sendable (String) -> Void
) -> Task<Void, Never> {
    Task {
        for await state in beekon.state {
            switch state {
            case .idle: Text("Not started")
            case .tracking: Text("Live")
            case .stopped(let reason): Text("Stopped: \(reason)")
            }
        }
    }
}

/// 002 "Turn on sync", verbatim.
func referenceTurnOnSync() async throws {
    try await Beekon.shared.configure(
        BeekonConfig.selfManaged(
            sync: SyncConfig(
                url: URL(string: "https://api.example.com/locations")!,
                headers: ["Authorization": "Bearer <static-token>"],  // optional
                intervalSeconds: 300,
                batchSize: 100
            )
        ))
}

/// 002 "Configure declarative refresh": an expression, bound to a constant here.
func referenceDeclarativeRefresh() -> SyncConfig {
    let config = SyncConfig(
        url: URL(string: "https://api.example.com/locations")!,
        auth: AuthConfig(
            accessToken: "<initial access token>",  // seed, optional
            refreshToken: "<initial refresh token>",  // seed
            expiresAt: Date().timeIntervalSince1970 + 3600,  // epoch seconds
            refreshUrl: URL(string: "https://auth.example.com/oauth/token")!,
            refreshPayload: [
                "grant_type": "refresh_token",
                "refresh_token": "{refreshToken}",  // substituted at refresh time
            ]
            // strategy: .bearer, refreshBodyFormat: .form, skewMarginSeconds: 60 — defaults
        ))
    return config
}

@Suite("Reference snippets")
struct ReferenceSnippetTests {
    /// The first label the snippet shows for `beekon`.
    static func firstLabel(from beekon: Beekon) async -> String? {
        let (labels, label) = AsyncStream.makeStream(of: String.self)
        let task = referenceObservingState(from: beekon) { label.yield($0) }
        var first: String?
        for await l in labels {
            first = l
            break
        }
        task.cancel()
        return first
    }

    @Test func theStateSnippetSeesTheReplayedState() async {
        // An instance of the test's own on every platform: nothing of the app's (see the snippet).
        let dir = TempDir()
        let beekon = Beekon(
            dependencies: BeekonDependencies(databasePath: dir.db, provider: ScriptedProvider(), clock: TestClock()))
        #expect(await Self.firstLabel(from: beekon) == "Not started")
    }

    #if os(Linux)
        @Test func theStateSnippetSeesTheSharedInstanceIdleOnLinux() async {
            // As published, on `Beekon.shared`: on Linux it subscribes only and opens nothing (no
            // auto-resume there). Never run on Apple platforms (see the snippet's comment).
            #expect(await Self.firstLabel(from: Beekon.shared) == "Not started")
        }
    #endif

    @Test func selfManagedIsTheSyncConfigurationWithEveryOtherDefault() throws {
        let sync = SyncConfig(
            url: URL(string: "https://api.example.com/locations")!,
            headers: ["Authorization": "Bearer <static-token>"], intervalSeconds: 300, batchSize: 100)
        let config = BeekonConfig.selfManaged(sync: sync)
        #expect(config == BeekonConfig(sync: sync))
        try config.validate()
        #expect(BeekonConfig.selfManaged(sync: nil).sync == nil)  // local-only
    }

    @Test func theDeclarativeRefreshSnippetIsAValidRecipeWithTheDocumentedDefaults() throws {
        let config = referenceDeclarativeRefresh()
        try config.validate()
        let auth = try #require(config.auth)
        #expect(auth.strategy == .bearer)
        #expect(auth.refreshBodyFormat == .form)
        #expect(auth.skewMarginSeconds == 60)
        #expect(auth.refreshPayload["refresh_token"] == "{refreshToken}")
    }

    @Test func theTurnOnSyncConfigurationIsAcceptedByAnInstance() async throws {
        let dir = TempDir()
        let beekon = Beekon(
            dependencies: BeekonDependencies(
                databasePath: dir.db, provider: ScriptedProvider(), clock: TestClock(),
                transport: ForbiddenTransport { _ in Issue.record("nothing is pending: no request expected") }))
        let config = BeekonConfig.selfManaged(
            sync: SyncConfig(
                url: URL(string: "https://api.example.com/locations")!, headers: ["Authorization": "Bearer <static-token>"],
                intervalSeconds: 300, batchSize: 100))
        try await beekon.configure(config)
        #expect(try await beekon.configuration() == config)
    }
}
