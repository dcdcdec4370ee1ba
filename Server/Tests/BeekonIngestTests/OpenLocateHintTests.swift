import BeekonWire
import Foundation
import Testing

@testable import BeekonIngest

extension Ingest {
    /// Issue 32: an upload of a device without an open locate request does not read
    /// `locate_requests` on SQLite (`OpenLocateHint`); no request is ever missed by it.
    @Suite struct OpenLocateHintTests {
        /// Before the requests on disk are loaded every upload reads; after, only marked installs.
        @Test func nothingIsSkippedBeforeTheLoad() {
            var hint = OpenLocateHint()
            #expect(hint.probe("a") == .read(mark: nil))
            hint.mark("a")
            #expect(hint.probe("b") == .read(mark: nil))
            hint.load(["b"])
            #expect(hint.probe("c") == OpenLocateHint.Probe.none)
            guard case .read(let a?) = hint.probe("a"), case .read(let b?) = hint.probe("b") else {
                Issue.record("a mark made before the load, and an install loaded, must both be read")
                return
            }
            #expect(a != b)
        }

        /// The race a mark number closes: an upload reads (no open request), a request is
        /// committed and marked, then the upload clears with its older mark: the new mark stays.
        @Test func aRequestMarkedDuringAReadIsNotCleared() {
            var hint = OpenLocateHint()
            hint.load(["d"])
            guard case .read(let seen?) = hint.probe("d") else {
                Issue.record("d is loaded")
                return
            }
            hint.mark("d")  // a request committed while the upload's read ran
            hint.clear("d", mark: seen)
            #expect(hint.probe("d") != .none)
            guard case .read(let now?) = hint.probe("d") else { return }
            hint.clear("d", mark: now)  // the next upload finds none open (answered): cleared
            #expect(hint.probe("d") == .none)
            #expect(hint.count == 0)
        }

        /// Through the store: a device with no request reads nothing and gets none; a request is
        /// delivered with the next upload; once closed the device is cleared; a store opened
        /// again on the file (a restart) loads the requests still open.
        @Test func theStoreDeliversEveryOpenRequestAndForgetsClosedOnes() async throws {
            let db = try await Backend.sqlite.freshDatabase()
            defer { db.remove() }
            let path = try db.sqlitePath
            let store = try SQLiteLocationStore(path: path, logger: testLogger)
            try await store.migrate()
            let (quiet, asked) = (Fixtures.ids.next(), Fixtures.ids.next())
            #expect(try await store.openLocateRequests(installId: quiet).isEmpty)
            #expect(store.openLocates.withLock { $0.probe(quiet.wireString) } == .none)

            let request = LocateRequest(
                id: Fixtures.ids.next(), installId: asked, requestedBy: "admin", createdAtMillis: Fixtures.base,
                expiresAtMillis: Fixtures.base + 60_000)
            #expect(try await store.insertLocate(request, payload: "{}", limit: LocateRateLimit()) == nil)
            #expect(try await store.openLocateRequests(installId: asked).map(\.id) == [request.id])

            // Reopened on the same file while the request is open: loaded, not skipped.
            let again = try SQLiteLocationStore(path: path, logger: testLogger)
            try await again.migrate()
            #expect(try await again.openLocateRequests(installId: asked).map(\.id) == [request.id])

            var closed = request
            let moved = closed.apply(.expire, nowMillis: Fixtures.base + 60_000)
            #expect(moved)
            #expect(closed.state == .expired)
            #expect(try await store.updateLocate(closed, from: .pending, payload: nil))
            #expect(try await store.openLocateRequests(installId: asked).isEmpty)
            #expect(store.openLocates.withLock { $0.count } == 0)
            #expect(try await again.openLocateRequests(installId: asked).isEmpty)
        }
    }
}
