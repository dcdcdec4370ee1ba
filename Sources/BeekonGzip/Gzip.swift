import CZlib
import Foundation

/// gzip (RFC 1952) through the system zlib, the one implementation the SDK (upload bodies,
/// recorded scan logs) and the ingest server (request bodies) share.
///
/// Inflating is strict: it runs in fixed-size steps and stops as soon as the output passes
/// a limit, so a gzip bomb costs at most `limit` bytes of memory; it requires the gzip
/// trailer (a truncated stream is an error) and rejects trailing bytes after it.
public enum Gzip {
    /// Why a gzip body could not be inflated.
    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// The inflated size would exceed the limit.
        case tooLarge(limit: Int)
        /// Not a gzip stream, corrupt, or cut short.
        case corrupt(String)

        /// The reason, as logs and error answers show it.
        public var description: String {
            switch self {
            case .tooLarge(let limit): return "decompressed body exceeds \(limit) bytes"
            case .corrupt(let why): return "invalid gzip body: \(why)"
            }
        }
    }

    /// Inflates a complete gzip stream, failing once the output would exceed `limit` bytes.
    public static func inflate(_ input: [UInt8], limit: Int) throws(Failure) -> [UInt8] {
        var stream = z_stream()
        // windowBits 15 + 16: gzip wrapper only.
        guard inflateInit2_(&stream, 31, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw .corrupt("zlib could not be initialised")
        }
        defer { inflateEnd(&stream) }
        var output: [UInt8] = []
        output.reserveCapacity(min(limit, max(4096, input.count * 4)))
        let step = 256 * 1024
        var chunk = [UInt8](repeating: 0, count: step)
        var status: Int32 = Z_OK
        var overLimit = false
        let consumed: Int = input.withUnsafeBufferPointer { inBuf -> Int in
            stream.next_in = UnsafeMutablePointer(mutating: inBuf.baseAddress)
            stream.avail_in = UInt32(inBuf.count)
            while status == Z_OK {
                let produced: Int = chunk.withUnsafeMutableBufferPointer { out in
                    stream.next_out = out.baseAddress
                    stream.avail_out = UInt32(step)
                    status = CZlib.inflate(&stream, Z_NO_FLUSH)
                    return step - Int(stream.avail_out)
                }
                if output.count + produced > limit {
                    overLimit = true
                    break
                }
                output.append(contentsOf: chunk[0..<produced])
                if status == Z_BUF_ERROR, produced > 0 { status = Z_OK }
                if status == Z_OK, stream.avail_in == 0, produced < step { status = Z_BUF_ERROR }
            }
            return inBuf.count - Int(stream.avail_in)
        }
        if overLimit { throw .tooLarge(limit: limit) }
        switch status {
        case Z_STREAM_END:
            guard consumed == input.count else { throw .corrupt("\(input.count - consumed) bytes after the end of the gzip stream") }
            return output
        case Z_BUF_ERROR:
            throw .corrupt("the gzip stream is truncated")
        default:
            let message = stream.msg.map { String(cString: $0) } ?? "zlib status \(status)"
            throw .corrupt(message)
        }
    }

    /// Compresses `input` as one gzip member (default level 6); zlib cannot fail here but
    /// for want of memory, which stops the process.
    public static func deflate(_ input: [UInt8], level: Int32 = 6) -> [UInt8] {
        guard let out = input.withUnsafeBytes({ gzip($0, level: level) }) else { preconditionFailure("zlib deflate failed") }
        return out
    }

    /// Compresses `data` as one gzip member (default level 6); nil when zlib fails (out of
    /// memory), so that an upload can go uncompressed rather than stop the app.
    public static func compress(_ data: Data, level: Int32 = 6) -> Data? {
        data.withUnsafeBytes { gzip($0, level: level) }.map { Data($0) }
    }

    /// Inflates one complete gzip member, failing once the output would exceed `limit` bytes.
    public static func decompress(_ data: Data, limit: Int = 64 << 20) throws(Failure) -> Data {
        Data(try inflate([UInt8](data), limit: limit))
    }

    private static func gzip(_ input: UnsafeRawBufferPointer, level: Int32) -> [UInt8]? {
        var stream = z_stream()
        // windowBits 15 + 16: gzip wrapper.
        guard
            deflateInit2_(
                &stream, level, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK
        else { return nil }
        defer { deflateEnd(&stream) }
        var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, UInt(input.count))) + 32)
        let written: Int? = output.withUnsafeMutableBufferPointer { outBuf in
            stream.next_in = UnsafeMutablePointer(mutating: input.bindMemory(to: Bytef.self).baseAddress)
            stream.avail_in = UInt32(input.count)
            stream.next_out = outBuf.baseAddress
            stream.avail_out = UInt32(outBuf.count)
            // A deflateBound buffer always finishes in one call.
            guard CZlib.deflate(&stream, Z_FINISH) == Z_STREAM_END else { return nil }
            return outBuf.count - Int(stream.avail_out)
        }
        guard let written else { return nil }
        output.removeSubrange(written...)
        return output
    }
}
