import Testing

@testable import Beekon

/// The signal between a drain's send and the preparation launched beside it (P3
/// pinned): the preparation waits for the request's hand-over, and is never left waiting by a
/// send that ends without one. That it starts later is measured by P3 (BENCHMARKS.md); here,
/// that every path releases it.
@Suite("A drain's request hand-over signal (SY-4)")
struct RequestHandOverTests {
    @Test("a waiter is released when the request is handed over, and later waiters pass at once")
    func aWaiterIsReleasedWhenTheRequestIsHandedOver() async {
        let handOver = RequestHandOver()
        let waiter = Task { await handOver.wait() }
        handOver.open()
        await waiter.value
        handOver.open()  // a second hand-over (the retry after a refresh) is harmless
        await handOver.wait()
    }

    @Test("a send that ends without reaching the transport still releases the preparation")
    func aSendEndingWithoutARequestReleasesTheWaiter() async {
        let handOver = RequestHandOver()
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await handOver.wait() }
            // The drain's send task ending without a request (dead credentials, budget spent) opens it.
            group.addTask { handOver.open() }
        }
    }

    @Test("a cancelled preparation stops waiting")
    func aCancelledWaiterStopsWaiting() async {
        let handOver = RequestHandOver()
        let waiter = Task { await handOver.wait() }
        waiter.cancel()
        await waiter.value
    }
}
