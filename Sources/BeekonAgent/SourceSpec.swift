import Beekon
import BeekonSources
import Foundation

/// A `--source` value: `replay:PATH`, `gpsd[://HOST[:PORT]]` or `nmea:PATH[?baud=N]`.
enum SourceSpec: Equatable, Sendable {
    case replay(path: String)
    case gpsd(host: String, port: Int)
    case nmea(path: String, baud: Int)

    struct Problem: Error, CustomStringConvertible { var description: String }

    static let usage = "replay:PATH, gpsd[://HOST[:PORT]] or nmea:PATH[?baud=N]"

    init(argument: String) throws(Problem) {
        if argument.hasPrefix("replay:") {
            let path = String(argument.dropFirst("replay:".count))
            guard !path.isEmpty else { throw Problem(description: "--source replay: needs a file path (replay:PATH)") }
            self = .replay(path: path)
        } else if argument == "gpsd" || argument.hasPrefix("gpsd://") || argument.hasPrefix("gpsd:") {
            self = try Self.gpsd(argument)
        } else if argument.hasPrefix("nmea:") {
            self = try Self.nmea(String(argument.dropFirst("nmea:".count)))
        } else {
            throw Problem(description: "unknown --source '\(argument)' (expected \(Self.usage))")
        }
    }

    /// `gpsd`, `gpsd://HOST`, `gpsd://HOST:PORT`, `gpsd://[IPv6]:PORT`, `gpsd://:PORT`.
    private static func gpsd(_ argument: String) throws(Problem) -> SourceSpec {
        let defaultHost = "127.0.0.1"
        let defaultPort = GPSDProvider.Configuration.defaultPort
        guard argument != "gpsd" else { return .gpsd(host: defaultHost, port: defaultPort) }
        guard argument.hasPrefix("gpsd://") else {
            throw Problem(description: "--source '\(argument)': write gpsd or gpsd://HOST:PORT")
        }
        var rest = Substring(argument.dropFirst("gpsd://".count))
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        var host = Substring(defaultHost)
        var portText: Substring?
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else {
                throw Problem(description: "--source '\(argument)': unclosed [ in an IPv6 address")
            }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if after.hasPrefix(":") {
                portText = after.dropFirst()
            } else if !after.isEmpty {
                throw Problem(description: "--source '\(argument)': expected :PORT after the address")
            }
        } else if let colon = rest.lastIndex(of: ":") {
            if colon != rest.startIndex { host = rest[..<colon] }
            portText = rest[rest.index(after: colon)...]
        } else if !rest.isEmpty {
            host = rest
        }
        guard !host.isEmpty, !host.contains("/"), !host.contains("?") else {
            throw Problem(description: "--source '\(argument)': bad host (expected gpsd://HOST:PORT)")
        }
        var port = defaultPort
        if let portText {
            guard let p = Int(portText), (1...65535).contains(p) else {
                throw Problem(description: "--source '\(argument)': port must be 1–65535")
            }
            port = p
        }
        return .gpsd(host: String(host), port: port)
    }

    /// `PATH` or `PATH?baud=N`.
    private static func nmea(_ rest: String) throws(Problem) -> SourceSpec {
        var path = Substring(rest)
        var baud = 9600
        if let q = rest.lastIndex(of: "?") {
            path = rest[..<q]
            let query = rest[rest.index(after: q)...]
            guard query.hasPrefix("baud="), let b = Int(query.dropFirst("baud=".count)) else {
                throw Problem(description: "--source nmea:\(rest): the only option is ?baud=N")
            }
            guard NMEASerialProvider.supportedBaudRates.contains(b) else {
                let list = NMEASerialProvider.supportedBaudRates.map(String.init).joined(separator: ", ")
                throw Problem(description: "--source nmea:\(rest): unsupported baud rate \(b) (use one of \(list))")
            }
            baud = b
        }
        guard !path.isEmpty else {
            throw Problem(description: "--source nmea: needs a device path (nmea:/dev/ttyUSB0?baud=9600)")
        }
        return .nmea(path: String(path), baud: baud)
    }
}
