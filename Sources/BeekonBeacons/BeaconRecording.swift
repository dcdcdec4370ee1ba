import Beekon
import BeekonGzip
import Foundation

/// A recording of beacon receptions on disk: a btsnoop capture or a JSON scan log,
/// either of them optionally gzipped, recognised by content (SPEC BY-5).
public enum BeaconRecording {
    /// Decompression stops beyond this many bytes (a bad file cannot exhaust memory).
    public static let maxDecompressedBytes = 256 << 20

    /// Reads the file at `url`; an unreadable file is one recorded error.
    public static func read(contentsOf url: URL, scanner: String = "btsnoop") -> BeaconReadResult {
        do {
            return read(try Data(contentsOf: url), scanner: scanner)
        } catch {
            var result = BeaconReadResult()
            result.record(.invalid(what: "recording", detail: "cannot read \(url.path)"), at: "file")
            return result
        }
    }

    /// Reads a recording from memory; `scanner` names the receiver of a btsnoop capture.
    public static func read(_ data: Data, scanner: String = "btsnoop") -> BeaconReadResult {
        var data = data
        if data.starts(with: [0x1F, 0x8B]) {
            do {
                data = try Gzip.decompress(data, limit: maxDecompressedBytes)
            } catch {
                var result = BeaconReadResult()
                result.record(.invalid(what: "recording", detail: "bad gzip data (\(error))"), at: "file")
                return result
            }
        }
        if data.starts(with: BtsnoopReader.magic) { return BtsnoopReader.read(data, scanner: scanner) }
        return ScanLogReader.read(data)
    }
}
