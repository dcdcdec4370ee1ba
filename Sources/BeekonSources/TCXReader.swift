import Foundation
import Beekon

/// Reads Garmin Training Center XML (TCX) files, the activity export of Garmin Connect,
/// Strava and MapMyRide (SRC-4).
///
/// Every `Trackpoint` with a `Position` (`LatitudeDegrees`, `LongitudeDegrees`) and a `Time`
/// is a fix; `AltitudeMeters` is its altitude and an extension's `Speed` (the `TPX` of
/// `ActivityExtension/v2`, m/s) its speed. Points without a position (heart rate only, the
/// device indoors) are skipped and counted. Diagnostics, truncation and encoding repair are
/// those of ``GPXReader``: the two formats share one XML parser.
public enum TCXReader {
    /// Reads a TCX document; `source` names it in messages.
    /// - Throws: `TrackReadError` with a one-line message naming `source`: not XML, not TCX, or no timed track point.
    public static func read(_ data: Data, source: String = "<tcx>") throws(TrackReadError) -> TrackReadResult {
        try GPXReader.readXML(data, source: source, format: .tcx)
    }

    /// Reads a TCX file.
    /// - Throws: `TrackReadError` when the file cannot be read or is not a usable TCX track.
    public static func read(contentsOf url: URL) throws(TrackReadError) -> TrackReadResult {
        try read(TrackFile.load(url), source: url.lastPathComponent)
    }
}
