import AsyncHTTPClient
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import Beekon
import NIOCore
import NIOPosix
import NIOSSL

extension AsyncHTTPClientTransport {
    /// Maps an AsyncHTTPClient/NIO failure to the SDK's two kinds, with a one-line reason.
    /// Every `.network` failure is retryable for the sync engine; none was re-sent here.
    static func classify(_ error: any Error, host: String, pastDeadline: Bool) -> HTTPTransportError {
        if pastDeadline { return .timeout }
        if let e = error as? HTTPClientError {
            switch e {
            case .deadlineExceeded, .readTimeout, .writeTimeout: return .timeout
            case .remoteConnectionClosed: return .network("connection closed before the answer")
            case .connectTimeout, .tlsHandshakeTimeout: return .network("connecting to \(host) timed out")
            case .cancelled: return .network("request cancelled")
            default: return .network("\(e)")
            }
        }
        if error is CancellationError { return .network("request cancelled") }
        if let e = error as? NIOConnectionError {
            return .network("cannot connect to \(host): \(e.connectionErrors.last.map { "\($0.error)" } ?? e.description)")
        }
        if error is NIOSSLError || error is BoringSSLError || error is NIOSSLExtraError {
            let text = "\(error)"
            if text.contains("CERTIFICATE_VERIFY_FAILED") || text.contains("unableToValidateCertificate") {
                return .network("TLS: the certificate of \(host) is not trusted (add its CA to sync.trustedCertificates)")
            }
            if text.lowercased().contains("hostname") {
                return .network("TLS: the certificate of \(host) does not name that host")
            }
            return .network("TLS handshake with \(host) failed: \(text)")
        }
        if let e = error as? IOError {
            // A reset or a broken pipe after the request went out: the same lost answer.
            switch e.errnoCode {
            case ECONNRESET, EPIPE: return .network("connection closed before the answer")
            case ECONNREFUSED: return .network("cannot connect to \(host): connection refused")
            default: return .network("\(host): \(String(cString: strerror(e.errnoCode)))")
            }
        }
        if error is ChannelError { return .network("connection closed before the answer (\(error))") }
        return .network("\(error)")
    }
}
