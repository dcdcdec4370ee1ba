import Foundation

/// The entry point for replay files: picks the reader by extension, or by
/// sniffing the content when the extension says nothing (SRC-4).
public enum TrackFile {
    /// The largest file read (256 MiB); larger files are refused rather than exhausting memory.
    public static let maxFileSize = 256 * 1024 * 1024

    /// Reads a track file; `format` overrides detection.
    /// - Throws: `TrackReadError` when the file cannot be read, its format is unknown, or it holds no usable fix.
    public static func read(contentsOf url: URL, format: TrackFormat? = nil) throws(TrackReadError) -> TrackReadResult {
        let data = try load(url)
        return try read(data, name: url.lastPathComponent, format: format)
    }

    /// Reads track data; `name` (a file name) is used for detection by extension and in messages.
    /// - Throws: `TrackReadError` when the format is unknown or the data holds no usable fix.
    public static func read(_ data: Data, name: String, format: TrackFormat? = nil) throws(TrackReadError) -> TrackReadResult {
        guard let format = format ?? detectFormat(name: name, data: data) else {
            throw .unknownFormat(file: name)
        }
        switch format {
        case .gpx: return try GPXReader.read(data, source: name)
        case .tcx: return try TCXReader.read(data, source: name)
        case .nmea: return try NMEAReader.read(data, source: name)
        case .csv: return try CSVTrackReader.read(data, source: name)
        case .ndjson: return try NDJSONTrackReader.read(data, source: name)
        }
    }

    /// The format for a file: by extension when it is a known one, else by the
    /// first non-blank content (`<` → TCX when a `<TrainingCenterDatabase` root appears in the
    /// first 4 KiB, else GPX, `{` → NDJSON, a `$`/`#` line → NMEA,
    /// a first line with a comma, semicolon or tab → CSV); nil when neither says.
    public static func detectFormat(name: String, data: Data) -> TrackFormat? {
        let ext = (name as NSString).pathExtension
        if let f = TrackFormat(fileExtension: ext) { return f }
        var bytes = data.prefix(4096)[...]
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
        guard let first = bytes.firstIndex(where: { $0 != 0x20 && $0 != 0x09 && $0 != 0x0A && $0 != 0x0D }) else {
            return nil
        }
        switch bytes[first] {
        case UInt8(ascii: "<"):
            return String(decoding: bytes, as: UTF8.self).contains("<TrainingCenterDatabase") ? .tcx : .gpx
        case UInt8(ascii: "{"): return .ndjson
        case UInt8(ascii: "$"), UInt8(ascii: "#"): return .nmea
        default:
            let line = bytes[first...].prefix { $0 != 0x0A && $0 != 0x0D }
            if line.contains(where: { $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: ";") || $0 == 0x09 }) { return .csv }
            return nil
        }
    }

    /// The bytes of a file, or `unreadable`.
    static func load(_ url: URL) throws(TrackReadError) -> Data {
        let name = url.lastPathComponent
        do {
            let values = try url.resourceValues(forKeys: [.isDirectoryKey, .fileSizeKey])
            if values.isDirectory == true { throw TrackReadError.unreadable(file: name, reason: "it is a directory") }
            if let size = values.fileSize, size > maxFileSize {
                throw TrackReadError.unreadable(file: name, reason: "\(size) bytes is over the \(maxFileSize)-byte limit")
            }
            return try Data(contentsOf: url)
        } catch let e as TrackReadError {
            throw e
        } catch {
            let ns = error as NSError
            let reason =
                ns.domain == NSCocoaErrorDomain && (ns.code == NSFileReadNoSuchFileError || ns.code == NSFileNoSuchFileError)
                ? "no such file" : ns.localizedDescription
            throw .unreadable(file: url.path, reason: reason)
        }
    }
}
