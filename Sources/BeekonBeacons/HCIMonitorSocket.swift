import Foundation
#if canImport(Glibc)
    import Glibc
#endif

/// The Linux HCI monitor channel (SPEC BY-5): a passive socket that receives every HCI packet
/// of every controller, the same frames `btmon` records. It needs `CAP_NET_RAW` (root, or
/// `setcap cap_net_raw+ep` on the binary); it does not start scanning — something else must
/// (`bluetoothctl scan on`, `btmgmt find -l`, or any BLE app), and duplicate filtering should be off.
public final class HCIMonitorSocket: @unchecked Sendable {
    /// Why the socket could not be opened or read: one line.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        /// The message.
        public var description: String
    }

    private let fd: Int32

    #if os(Linux)
        /// Opens and binds the monitor channel.
        public init() throws(Failure) {
            let AF_BLUETOOTH: Int32 = 31
            let BTPROTO_HCI: Int32 = 1
            let fd = socket(AF_BLUETOOTH, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), BTPROTO_HCI)
            guard fd >= 0 else { throw Self.failure("socket(AF_BLUETOOTH, SOCK_RAW, BTPROTO_HCI)") }
            // struct sockaddr_hci { sa_family_t hci_family; unsigned short hci_dev; unsigned short hci_channel; }
            var address: [UInt16] = [UInt16(AF_BLUETOOTH), 0xFFFF /* HCI_DEV_NONE */, 2 /* HCI_CHANNEL_MONITOR */]
            let bound = address.withUnsafeMutableBytes { raw in
                bind(fd, raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(raw.count))
            }
            guard bound == 0 else {
                let error = Self.failure("bind(HCI_CHANNEL_MONITOR)")
                close(fd)
                throw error
            }
            self.fd = fd
        }

        /// Blocks for the next frame (one per read).
        public func next() throws(Failure) -> [UInt8] {
            var buffer = [UInt8](repeating: 0, count: 4_096)
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            guard n >= 0 else { throw Self.failure("read(HCI monitor)") }
            return Array(buffer.prefix(n))
        }

        private static func failure(_ call: String) -> Failure {
            let code = errno
            let hint =
                code == EPERM || code == EACCES
                ? " (needs CAP_NET_RAW: run as root or setcap cap_net_raw+ep)"
                : code == EAFNOSUPPORT ? " (no Bluetooth support in this kernel)" : ""
            return Failure(description: "\(call) failed: \(String(cString: strerror(code)))\(hint)")
        }
    #else
        /// The monitor channel exists only on Linux.
        public init() throws(Failure) {
            throw Failure(description: "the HCI monitor channel exists only on Linux")
        }

        /// Never reached.
        public func next() throws(Failure) -> [UInt8] { [] }
    #endif

    deinit {
        #if os(Linux)
            close(fd)
        #endif
    }
}
