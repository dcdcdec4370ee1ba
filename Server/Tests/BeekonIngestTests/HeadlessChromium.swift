import Foundation
import ProcessSpawn
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A real headless Chromium (Debian `chromium`) driven over the DevTools protocol on
/// `--remote-debugging-pipe` (fd 3 in, fd 4 out, NUL-terminated JSON messages): no
/// WebSocket client and no third-party code needed. One page per instance.
///
/// Every call blocks on the browser's pipe, so the public calls are `async` and run on a
/// thread of their own (``blocking(_:)``): a page waited on for 40 s must not hold
/// one of the cooperative pool's threads, which in-process servers of other tests need.
final class HeadlessChromium: @unchecked Sendable {
    /// The browser binary, or nil when it is not installed.
    static var binary: String? {
        ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"].first {
            FileManager.default.isExecutableFile(atPath: $0)
        }
    }

    private let process: SpawnedProcess
    private let toBrowser: Int32
    private let fromBrowser: Int32
    private let profile: String
    private var nextID = 1
    private var buffer: [UInt8] = []
    private var session: String = ""

    /// Starts the browser and opens `url` in a 1200×800 page.
    static func launch(_ url: String) async throws -> HeadlessChromium {
        try await blocking { try HeadlessChromium(url: url) }
    }

    private init(url: String) throws {
        guard let binary = Self.binary else { throw TestFailure("chromium is not installed (apt-get install chromium)") }
        profile = FileManager.default.temporaryDirectory.appendingPathComponent("beekon-chromium-\(UUID().uuidString)").path
        var input: [Int32] = [0, 0]
        var output: [Int32] = [0, 0]
        guard pipe(&input) == 0, pipe(&output) == 0 else { throw TestFailure("pipe() failed") }
        let devnull = open("/dev/null", O_RDWR | O_CLOEXEC)
        defer {
            close(devnull)
            close(input[0])
            close(output[1])
        }
        let args = [
            "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe", "--no-first-run",
            "--disable-extensions", "--disable-background-networking", "--user-data-dir=\(profile)", "--window-size=1200,800",
            "about:blank",
        ]
        // `--remote-debugging-pipe` reads fd 3 and writes fd 4.
        do {
            process = try SpawnedProcess(binary, args, directory: nil, descriptors: [devnull, devnull, devnull, input[0], output[1]])
        } catch {
            close(input[1])
            close(output[0])
            throw error
        }
        toBrowser = input[1]
        fromBrowser = output[0]
        let target = try call("Target.createTarget", ["url": url])
        let targetId = try #require(target["targetId"] as? String)
        let attached = try call("Target.attachToTarget", ["targetId": targetId, "flatten": true])
        session = try #require(attached["sessionId"] as? String)
    }

    deinit {
        process.signal(SIGKILL)
        _ = process.waitForExit(until: Date(timeIntervalSinceNow: 30))  // a failure bound: SIGKILL is immediate
        close(toBrowser)
        close(fromBrowser)
        try? FileManager.default.removeItem(atPath: profile)
    }

    /// Evaluates `expression` in the page (awaiting a promise); its JSON value as a `T`, nil when it is not one.
    func evaluate<T: Sendable>(_ expression: String, as type: T.Type) async throws -> T? {
        try await blocking { try self.evaluateNow(expression) as? T }
    }

    /// Re-evaluates `expression` until it is `true` or `timeout` passes; the time it took.
    @discardableResult
    func waitUntil(_ expression: String, timeout: Double) async throws -> Double {
        try await blocking { try self.waitNow(expression, timeout: timeout) }
    }

    /// A PNG of the page as it is drawn now.
    func screenshot() async throws -> Data {
        try await blocking { try self.screenshotNow() }
    }

    private func evaluateNow(_ expression: String) throws -> Any? {
        let r = try call("Runtime.evaluate", ["expression": expression, "returnByValue": true, "awaitPromise": true], session: session)
        return (r["result"] as? [String: Any])?["value"]
    }

    private func waitNow(_ expression: String, timeout: Double) throws -> Double {
        let start = Date()
        while Date().timeIntervalSince(start) < timeout {
            if try evaluateNow(expression) as? Bool == true { return Date().timeIntervalSince(start) }
            usleep(20_000)  // polling the page, bounded by the timeout
        }
        // What the page says of itself (the dashboard keeps its state in the body's data attributes).
        let state = try? evaluateNow(
            "JSON.stringify({ data: Object.assign({}, document.body.dataset), width: innerWidth, height: innerHeight })")
        throw TestFailure("the page never satisfied in \(timeout) s: \(expression); page: \(state as? String ?? "unreadable")")
    }

    private func screenshotNow() throws -> Data {
        let r = try call("Page.captureScreenshot", ["format": "png"], session: session)
        let text = try #require(r["data"] as? String)
        return try #require(Data(base64Encoded: text))
    }

    private func call(_ method: String, _ params: [String: Any], session: String? = nil) throws -> [String: Any] {
        let id = nextID
        nextID += 1
        var message: [String: Any] = ["id": id, "method": method, "params": params]
        if let session { message["sessionId"] = session }
        var bytes = [UInt8](try JSONSerialization.data(withJSONObject: message))
        bytes.append(0)
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { write(toBrowser, $0.baseAddress, $0.count) }
            guard n > 0 else { throw TestFailure("the browser closed its pipe") }
            sent += n
        }
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            let reply = try readMessage()
            guard reply["id"] as? Int == id else { continue }  // events and other replies
            if let error = reply["error"] { throw TestFailure("\(method) failed: \(error)") }
            return reply["result"] as? [String: Any] ?? [:]
        }
        throw TestFailure("\(method) got no answer")
    }

    private func readMessage() throws -> [String: Any] {
        while true {
            if let end = buffer.firstIndex(of: 0) {
                let message = Array(buffer[..<end])
                buffer.removeSubrange(...end)
                return (try JSONSerialization.jsonObject(with: Data(message)) as? [String: Any]) ?? [:]
            }
            var chunk = [UInt8](repeating: 0, count: 65_536)
            let n = chunk.withUnsafeMutableBytes { read(fromBrowser, $0.baseAddress, $0.count) }
            guard n > 0 else { throw TestFailure("the browser closed its pipe") }
            buffer.append(contentsOf: chunk[..<n])
        }
    }
}
