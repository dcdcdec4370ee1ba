import BeekonTestSupport
import Foundation
import Testing
import Beekon
@testable import BeekonSources
import BeekonTesting
#if canImport(Glibc)
    import Glibc
#endif

/// SRC-3 live: a pseudo-terminal pair and a FIFO written by the test.
@Suite("NMEA serial provider", .serialized)
struct NMEASerialProviderTests {
    /// 10 epochs (GGA+GSA+RMC) of the derived walk log.
    static func epochs(_ from: Int, _ count: Int) throws -> [String] {
        let text = String(decoding: try SharedData.data("nmea/derived_apple_watch_walk.nmea"), as: UTF8.self)
        return text.split(whereSeparator: \.isNewline).filter { $0.hasPrefix("$") }.dropFirst(from * 3).prefix(count * 3).map(String.init)
    }

    static func expected(_ lines: [String]) -> [RawFix] {
        var p = NMEAParser()
        return p.feed(Array((lines.joined(separator: "\r\n") + "\r\n").utf8)) + p.finish()
    }

    /// The quiet time that ends an epoch. The writer below is a test thread that a loaded
    /// two-core machine can stall between two sentences of one epoch; a stall longer than this
    /// would end the epoch early, so it is seconds, not the tenths a real receiver needs. Only
    /// each test's last epoch waits for it.
    static let settle = 2.0

    /// Writes all of `bytes` to `fd` in random small chunks (partial lines).
    static func writeChunked(_ fd: Int32, _ bytes: [UInt8], _ rng: inout SeededRandom) throws {
        var i = 0
        while i < bytes.count {
            let n = min(Int.random(in: 1...9, using: &rng), bytes.count - i)
            let w = bytes[i..<(i + n)].withUnsafeBytes { write(fd, $0.baseAddress, n) }
            if w < 0, errno == EINTR || errno == EAGAIN { continue }
            guard w > 0 else { throw Deadline.Expired(description: "write failed: \(String(cString: strerror(errno)))") }
            i += w
        }
    }

    static func isConnected(_ e: LiveSourceEvent) -> Bool {
        if case .connected = e { return true }
        return false
    }

    /// A pty: raw termios at the requested baud, partial writes, binary noise and
    /// broken checksums (skipped and counted), one fix per epoch, then the master
    /// closing (device gone) → servicesDisabled after the grace period.
    @Test func ptyWithNoiseAndBadChecksumsThenDeviceGone() async throws {
        let (master, slavePath) = try #require(PseudoTerminal.open())
        // Opened through a stable link, as /dev/serial/by-id/… is: unplugging removes the link,
        // so a pty number reused by a concurrent test (gpsfake uses ptys) is never reopened.
        let temp = TempDir()
        let dir = temp.url
        let link = dir.appendingPathComponent("usb-receiver").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: slavePath)
        let collector = StreamCollector()
        let provider = try NMEASerialProvider(
            configuration: .init(path: link, baud: 38400, policy: .init(gracePeriod: .seconds(1)), settle: Self.settle),
            onEvent: collector.eventHandler())
        collector.consume(try await provider.start(mode: .balanced))
        try await collector.wait("the device to open") { $0.events.contains(where: Self.isConnected) }

        // The provider set the line raw at 38400 baud.
        let probe = open(slavePath, O_RDWR | O_NOCTTY | O_NONBLOCK)
        try #require(probe >= 0)
        var t = termios()
        #expect(tcgetattr(probe, &t) == 0)
        close(probe)
        #expect(cfgetispeed(&t) == speed_t(B38400) && cfgetospeed(&t) == speed_t(B38400))
        #expect(t.c_lflag & tcflag_t(ICANON) == 0 && t.c_lflag & tcflag_t(ECHO) == 0)
        #expect(t.c_iflag & tcflag_t(ICRNL) == 0 && t.c_cflag & tcflag_t(CLOCAL) != 0)

        let lines = try Self.epochs(0, 10)
        let expected = Self.expected(lines)
        #expect(expected.count == 10)
        var rng = SeededRandom(seed: 0x5E71A1)
        var stream: [UInt8] = []
        var badChecksums = 0
        for (i, line) in lines.enumerated() {
            if i % 4 == 1 {
                stream += (0..<Int.random(in: 5...40, using: &rng)).map { _ in UInt8.random(in: 0x80...0xFF, using: &rng) } + [0x0D, 0x0A]
            }
            if i % 5 == 2 {
                // The same sentence with a wrong checksum: skipped, counted.
                var broken = Array(line.utf8)
                broken[broken.count - 1] = broken[broken.count - 1] == UInt8(ascii: "0") ? UInt8(ascii: "1") : UInt8(ascii: "0")
                stream += broken + [0x0D, 0x0A]
                badChecksums += 1
            }
            stream += Array(line.utf8) + [0x0D, 0x0A]
        }
        try Self.writeChunked(master, stream, &rng)
        let last = expected.last!.timestamp
        try await collector.wait("the last epoch (settled)") { s in s.fixes.contains { $0.timestamp == last } }
        let got = await collector.fixes
        #expect(got == expected, "one fix per epoch, same values as the file parser")
        let d = provider.diagnostics
        #expect(d.skipped(TrackSkipReason.badChecksum) == badChecksums)
        #expect(d.skipped(TrackSkipReason.malformed) >= 3)
        #expect(d.fixes == 10)

        // Device gone (unplugged): the link goes, then the device; no reopen possible → servicesDisabled.
        try FileManager.default.removeItem(atPath: link)
        close(master)
        try await collector.wait("the stream to fail", timeout: .seconds(15)) { $0.finished }
        let outcome = try #require(await collector.outcome)
        guard case .failure(let error) = outcome, case .servicesDisabled(let why)? = error as? LocationProviderError else {
            Issue.record("expected servicesDisabled, got \(outcome)")
            return
        }
        #expect(why.contains(link) && why.contains("No such file"), "\(why)")
    }

    /// A FIFO: the writer closing is a disconnect; the provider reopens and continues
    /// with the next writer; the FIFO removed → gives up.
    @Test func fifoReopensForTheNextWriterThenGivesUp() async throws {
        let temp = TempDir()
        let dir = temp.url
        let path = dir.appendingPathComponent("gps.fifo").path
        try #require(mkfifo(path, 0o600) == 0)
        let collector = StreamCollector()
        let provider = try NMEASerialProvider(
            configuration: .init(path: path, policy: .init(gracePeriod: .seconds(1)), settle: Self.settle),
            onEvent: collector.eventHandler())
        collector.consume(try await provider.start(mode: .balanced))
        var rng = SeededRandom(seed: 0xF1F0)

        let part1 = try Self.epochs(0, 5)
        let part2 = try Self.epochs(5, 5)
        for (n, part) in [part1, part2].enumerated() {
            try await collector.wait("open #\(n + 1)") { s in s.events.filter(Self.isConnected).count >= n + 1 }
            let writer = open(path, O_WRONLY)
            try #require(writer >= 0)
            try Self.writeChunked(writer, Array((part.joined(separator: "\n") + "\n").utf8), &rng)
            // The second writer removes the FIFO before it leaves: no reopen can succeed after its EOF.
            if n == 1 { try FileManager.default.removeItem(atPath: path) }
            close(writer)
            let last = Self.expected(part).last!.timestamp
            try await collector.wait("part \(n + 1)'s last fix") { s in s.fixes.contains { $0.timestamp == last } }
        }
        #expect(await collector.fixes == Self.expected(part1 + part2))
        #expect(provider.openCount >= 2)

        try await collector.wait("the stream to fail", timeout: .seconds(15)) { $0.finished }
        let outcome = try #require(await collector.outcome)
        guard case .failure(let error) = outcome, case .servicesDisabled? = error as? LocationProviderError else {
            Issue.record("expected servicesDisabled, got \(outcome)")
            return
        }
    }

    /// A regular file is read to its end; the stream then finishes normally.
    @Test func regularFileEndsTheStream() async throws {
        let url = SharedData.url("nmea/gpsd_humminbird-M37_powerboat.log")
        let collector = StreamCollector()
        let provider = try NMEASerialProvider(configuration: .init(path: url.path))
        collector.consume(try await provider.start(mode: .low))
        try await collector.wait("the end of the file") { $0.finished }
        let outcome = try #require(await collector.outcome)
        if case .failure(let e) = outcome { Issue.record("failed: \(e)") }
        #expect(await collector.fixes == (try parsedFixes(url)))
    }

    @Test func rejectsUnsupportedBaud() {
        #expect(throws: LocationProviderError.self) { try NMEASerialProvider(configuration: .init(path: "/dev/null", baud: 1234)) }
        #expect(NMEASerialProvider.supportedBaudRates == [4800, 9600, 19200, 38400, 57600, 115200])
    }

    /// A missing device is retried for the grace period, then reported.
    @Test func missingDeviceGivesUp() async throws {
        let collector = StreamCollector()
        let provider = try NMEASerialProvider(
            configuration: .init(path: "/dev/beekon-no-such-device", policy: .init(gracePeriod: .milliseconds(600))))
        collector.consume(try await provider.start(mode: .balanced))
        try await collector.wait("the stream to fail", timeout: .seconds(10)) { $0.finished }
        let outcome = try #require(await collector.outcome)
        guard case .failure(let error) = outcome, case .servicesDisabled(let why)? = error as? LocationProviderError else {
            Issue.record("expected servicesDisabled, got \(outcome)")
            return
        }
        #expect(why.contains("No such file"), "\(why)")
    }
}

/// `posix_openpt`/`grantpt`/`unlockpt`/`ptsname` are not exported by the Glibc
/// module (they need `_XOPEN_SOURCE`), so they are looked up at run time.
enum PseudoTerminal {
    private typealias OpenPT = @convention(c) (Int32) -> Int32
    private typealias FDCall = @convention(c) (Int32) -> Int32
    private typealias PTSName = @convention(c) (Int32) -> UnsafeMutablePointer<CChar>?

    private static func symbol<T>(_ name: String, as: T.Type) -> T? {
        guard let handle = dlopen(nil, RTLD_NOW), let sym = dlsym(handle, name) else { return nil }
        return unsafeBitCast(sym, to: T.self)
    }

    /// A new master descriptor and its slave's path, or nil.
    static func open() -> (master: Int32, slavePath: String)? {
        guard let openpt = symbol("posix_openpt", as: OpenPT.self), let grant = symbol("grantpt", as: FDCall.self),
            let unlock = symbol("unlockpt", as: FDCall.self), let name = symbol("ptsname", as: PTSName.self)
        else { return nil }
        let master = openpt(O_RDWR | O_NOCTTY)
        guard master >= 0 else { return nil }
        guard grant(master) == 0, unlock(master) == 0, let p = name(master) else {
            close(master)
            return nil
        }
        return (master, String(cString: p))
    }
}
