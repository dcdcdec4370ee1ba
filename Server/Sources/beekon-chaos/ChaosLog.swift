import Foundation

/// The harness's progress lines on stderr (`[chaos HH:MM:SS] …`).
enum ChaosLog {
    /// Prints one line.
    static func line(_ message: String) {
        let time = ISO8601DateFormatter.string(from: Date(), timeZone: .current, formatOptions: [.withTime, .withColonSeparatorInTime])
        FileHandle.standardError.write(Data("[chaos \(time)] \(message)\n".utf8))
    }
}
