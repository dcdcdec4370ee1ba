import CZlib
import Foundation

/// gzip (RFC 1952) through the system zlib. `package` so the benchmarks measure the SDK's own gzip.
package enum Gzip {
    package enum Failure: Error, Equatable {
        case zlib(Int32)
        case tooLarge
        case truncated
    }

    /// Compresses `data` into a gzip member (default level 6).
    package static func compress(_ data: Data, level: Int32 = 6) throws(Failure) -> Data {
        var stream = z_stream()
        // windowBits 15 + 16: gzip wrapper.
        var rc = deflateInit2_(
            &stream, level, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY,
            ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
        guard rc == Z_OK else { throw .zlib(rc) }
        defer { deflateEnd(&stream) }
        var out = Data(count: Int(deflateBound(&stream, UInt(data.count))) + 32)
        let written: Int = data.withUnsafeBytes { (input: UnsafeRawBufferPointer) -> Int in
            out.withUnsafeMutableBytes { (output: UnsafeMutableRawBufferPointer) -> Int in
                stream.next_in = UnsafeMutablePointer(mutating: input.bindMemory(to: Bytef.self).baseAddress)
                stream.avail_in = uInt(input.count)
                stream.next_out = output.bindMemory(to: Bytef.self).baseAddress
                stream.avail_out = uInt(output.count)
                rc = deflate(&stream, Z_FINISH)
                return output.count - Int(stream.avail_out)
            }
        }
        guard rc == Z_STREAM_END else { throw .zlib(rc) }
        out.count = written
        return out
    }

    /// Decompresses one gzip member, refusing output beyond `limit` bytes.
    package static func decompress(_ data: Data, limit: Int = 64 << 20) throws(Failure) -> Data {
        var stream = z_stream()
        var rc = inflateInit2_(&stream, 47, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
        guard rc == Z_OK else { throw .zlib(rc) }
        defer { inflateEnd(&stream) }
        var out = Data()
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        let failure: Failure? = data.withUnsafeBytes { (input: UnsafeRawBufferPointer) -> Failure? in
            stream.next_in = UnsafeMutablePointer(mutating: input.bindMemory(to: Bytef.self).baseAddress)
            stream.avail_in = uInt(input.count)
            repeat {
                let produced: Int = chunk.withUnsafeMutableBufferPointer { buf in
                    stream.next_out = buf.baseAddress
                    stream.avail_out = uInt(buf.count)
                    rc = inflate(&stream, Z_NO_FLUSH)
                    return buf.count - Int(stream.avail_out)
                }
                if rc != Z_OK && rc != Z_STREAM_END { return rc == Z_BUF_ERROR ? .truncated : .zlib(rc) }
                if out.count + produced > limit { return .tooLarge }
                out.append(contentsOf: chunk[0..<produced])
                if rc == Z_OK && stream.avail_in == 0 && produced == 0 { return .truncated }
            } while rc != Z_STREAM_END
            return nil
        }
        if let failure { throw failure }
        return out
    }
}
