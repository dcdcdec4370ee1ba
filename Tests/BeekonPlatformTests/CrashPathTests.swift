import BeekonPrimitives
import Foundation
import Testing

@testable import Beekon

/// No crash paths in the host app (XR-1): each decision the Apple glue
/// makes before touching an API Apple documents as fatal, as a value tested here.
@Suite("No crash paths")
struct CrashPathTests {
    @Test("XR-1: registerBackgroundTasks() twice registers the identifier once")
    func registeringTwiceRegistersOnce() {
        let registry = BackgroundTaskRegistry()
        let calls = Locked(0)
        let register = {
            calls.withLock { $0 += 1 }
            return true
        }
        #expect(registry.register("dev.beekon.refresh", register))
        #expect(registry.register("dev.beekon.refresh", register), "the first result, again")
        #expect(calls.value == 1, "BGTaskScheduler saw one registration")
        #expect(registry.register("other", { false }) == false)
        #expect(registry.register("other", register) == false)
        #expect(calls.value == 1)
    }

    @Test("XR-1: without UIBackgroundModes location, start() refuses with a clear error instead of trapping")
    func aMissingBackgroundModeIsRefused() {
        for missing in [nil, [] as [Any], ["fetch", "remote-notification"] as [Any], "location" as Any] as [Any?] {
            let modes = BackgroundModes(infoValue: missing)
            #expect(!modes.allowsBackgroundLocation)
            guard case .failed(let why)? = modes.startRefusal else {
                Issue.record("expected a refusal for \(String(describing: missing))")
                continue
            }
            #expect(why.contains("UIBackgroundModes") && why.contains("location"))
        }
        let declared = BackgroundModes(infoValue: ["remote-notification", "location"])
        #expect(declared.allowsBackgroundLocation && declared.startRefusal == nil)
    }

    @Test("AU-9: the Keychain account is stable across container moves, and the old item is found")
    func theKeychainAccountMigrates() {
        let home = "/var/mobile/Containers/Data/Application/6A1C-NEW"
        let path = home + "/Library/Application Support/Beekon/beekon.sqlite"
        let stable = KeychainAccount.stable(databasePath: path, home: home)
        #expect(stable == "Library/Application Support/Beekon/beekon.sqlite")
        #expect(KeychainAccount.stable(databasePath: path, home: home + "/") == stable)
        #expect(KeychainAccount.stable(databasePath: "/elsewhere/db.sqlite", home: home) == "/elsewhere/db.sqlite")
        // Items stored by an earlier version under the absolute path of an older container.
        let old = "/var/mobile/Containers/Data/Application/0B7E-OLD/Library/Application Support/Beekon/beekon.sqlite"
        let other = "/var/mobile/Containers/Data/Application/0B7E-OLD/Library/Application Support/Other/beekon.sqlite"
        #expect(KeychainAccount.legacy(among: [other, old, stable], stable: stable) == old)
        #expect(KeychainAccount.legacy(among: [other], stable: stable) == nil)
        #expect(KeychainAccount.legacy(among: [old], stable: "/abs/path") == nil)
    }

    @Test("AU-9: an item under the old absolute-path account moves to the stable account on first read")
    func theKeychainItemMoves() throws {
        let stable = "Library/Application Support/Beekon/beekon.sqlite"
        let old = "/var/mobile/Containers/Data/Application/0B7E-OLD/" + stable
        let items = Locked([old: Data("tokens".utf8), "/elsewhere/other.sqlite": Data("other".utf8)])
        func load(locked: Bool = false) throws(SecretStoreError) -> Data? {
            try KeychainAccount.load(
                stable: stable,
                read: { (account: String) throws(SecretStoreError) -> Data? in
                    if locked { throw .unavailable("keychain read deferred") }
                    return items.value[account]
                },
                accounts: { items.value.keys.sorted() },
                write: { data in items.withLock { $0[stable] = data } },
                delete: { account in items.withLock { $0[account] = nil } })
        }
        #expect(throws: SecretStoreError.self) { try load(locked: true) }
        #expect(items.value[old] != nil, "a locked Keychain moves nothing")
        #expect(try load() == Data("tokens".utf8))
        #expect(items.value == [stable: Data("tokens".utf8), "/elsewhere/other.sqlite": Data("other".utf8)])
        items.withLock { $0[stable] = Data("rotated".utf8) }
        #expect(try load() == Data("rotated".utf8), "the stable item wins once it exists")
        items.withLock { $0 = [:] }
        #expect(try load() == nil)
    }

    static func fence(_ id: String, north km: Double) -> Geofence {
        Geofence(id: id, latitude: 45 + km / 111.195, longitude: 14, radiusMeters: 100)
    }

    @Test("GF-4, XR-1: at launch, regions the OS kept are reconciled and others' regions share the budget")
    func launchReconcilesOSRegions() throws {
        let fences = (0..<30).map { Self.fence("f\($0)", north: Double($0)) }
        var paging = RegionPaging(fences: fences)
        // The OS kept: last run's page (f20…f28 and the refresh region), a deleted fence, two beacon regions.
        let held = (20..<29).map { "f\($0)" } + [RegionPager.refreshIdentifier, "gone", "beacon-door", "beacon-desk"]
        let ours: Set<String> = Set(held).subtracting(["beacon-door", "beacon-desk"])
        paging.adopt(held: held + [StationaryWakePlan.identifier], isOurs: { ours.contains($0) })
        #expect(paging.slotCount == 17, "20 slots minus the wake region's and the two beacon regions")
        let first = paging.observe(latitude: 45, longitude: 14)
        let change = try #require(first)
        #expect(change.add.map(\.id) == (0..<16).map { "f\($0)" }, "16 fence slots + the refresh region")
        #expect(!change.remove.contains(StationaryWakePlan.identifier), "the wake region is the provider's, not the pager's")
        #expect(Set(change.remove) == Set((20..<29).map { "f\($0)" } + ["gone"]), "stale regions do not pile up")
        #expect(!change.remove.contains { $0.hasPrefix("beacon") }, "others' regions are never touched")
        #expect(paging.observe(latitude: 45, longitude: 14) == nil, "reconciled once")
        #expect(Set(paging.reset()) == Set((0..<16).map { "f\($0)" } + [RegionPager.refreshIdentifier]))
    }

    @Test("GF-4, XR-1: a refused region (monitoring failure, condition limit) costs a slot, not a crash loop")
    func aRefusedRegionShrinksTheBudget() throws {
        let fences = (0..<30).map { Self.fence("f\($0)", north: Double($0)) }
        var paging = RegionPaging(fences: fences)
        #expect(paging.observe(latitude: 45, longitude: 14) != nil)
        #expect(paging.current?.fences.count == 18, "20 slots: 18 fences, the refresh region, the wake region")
        let refused = paging.refused("f17")
        let change = try #require(refused)
        #expect(paging.slotCount == 18)
        #expect(change.remove == ["f17"], "the farthest fence leaves; the refresh radius shrinks to its edge")
        #expect(paging.current?.fences.count == 17)
        #expect(paging.isOurs("f3") && paging.isOurs(RegionPager.refreshIdentifier) && !paging.isOurs("beacon-door"))
    }
}
