import Foundation

/// A few evenly spaced points of a GPX or NMEA recording: where a trial puts its agents'
/// geofences, so that the replay crosses them.
enum TrackPoints {
    /// Up to `count` (latitude, longitude) points of the file at `path`.
    static func sample(_ path: String, count: Int = 6) -> [(Double, Double)] {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return [] }
        let points = path.hasSuffix(".gpx") ? gpx(text) : nmea(text)
        guard !points.isEmpty else { return [] }
        let step = max(1, points.count / (count + 1))
        return Array(stride(from: step, to: points.count, by: step).map { points[$0] }.prefix(count))
    }

    private static func gpx(_ text: String) -> [(Double, Double)] {
        guard let pattern = try? Regex(#"lat="([-0-9.]+)"\s+lon="([-0-9.]+)""#) else { return [] }
        return text.matches(of: pattern).compactMap { match in
            guard let lat = match.output[1].substring.flatMap({ Double($0) }),
                let lon = match.output[2].substring.flatMap({ Double($0) })
            else { return nil }
            return (lat, lon)
        }
    }

    private static func nmea(_ text: String) -> [(Double, Double)] {
        text.split(whereSeparator: \.isNewline).compactMap { line in
            let parts = line.split(separator: ",", omittingEmptySubsequences: false)
            guard parts.count > 6, parts[0].hasSuffix("GGA"), parts[2].count > 2, parts[4].count > 3,
                let latDegrees = Double(parts[2].prefix(2)), let latMinutes = Double(parts[2].dropFirst(2)),
                let lonDegrees = Double(parts[4].prefix(3)), let lonMinutes = Double(parts[4].dropFirst(3))
            else { return nil }
            let lat = latDegrees + latMinutes / 60
            let lon = lonDegrees + lonMinutes / 60
            return (parts[3] == "S" ? -lat : lat, parts[5] == "W" ? -lon : lon)
        }
    }
}
