import Beekon
import BeekonSources
import Foundation
import Testing

/// The README's "Using the SDK" snippet, kept compiling (DESIGN rule: the quick start
/// compiles) and run against a real replay so it also behaves as the README says.
@Suite("README quick start")
struct ReadmeQuickStartTests {
    func readmeSnippet(databasePath: String, track: URL, upTo count: Int) async throws -> [Location] {
        let clock = ReplayClock()
        let beekon = Beekon(
            dependencies: BeekonDependencies(
                databasePath: databasePath,
                provider: try ReplayProvider(contentsOf: track, clock: clock),
                clock: clock))

        try await beekon.configure(
            BeekonConfig(
                preset: .balanced,  // 30 s / 100 m
                sync: nil))
        let positions = beekon.positions  // subscribe first: hot, replay-1
        if try await !beekon.resumeIfNeeded() { try await beekon.start() }  // same session after a crash

        var seen: [Location] = []
        for await location in positions {  // emitted after the fix is durably stored
            seen.append(location)
            if seen.count == count { break }
        }
        try await beekon.stop()
        return seen
    }

    @Test func theSnippetTracksAReplay() async throws {
        let dir = NSTemporaryDirectory() + "beekon-readme-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let seen = try await readmeSnippet(
            databasePath: dir + "/beekon.sqlite",
            track: SharedData.url("gpx/gpxgo_visnjan_4s.gpx"), upTo: 5)
        #expect(seen.count == 5)
        #expect(zip(seen, seen.dropFirst()).allSatisfy { $1.timestamp.timeIntervalSince($0.timestamp) >= 30 })
    }
}
