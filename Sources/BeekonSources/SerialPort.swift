import Foundation
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Opening an NMEA device: a serial port or pty (raw 8N1 at a baud rate), a
/// FIFO or a regular file (no termios).
enum SerialPort {
    /// What was opened.
    enum Kind: Sendable, Equatable {
        /// A terminal device (serial port, USB serial adapter, pty): termios applied.
        case terminal
        /// A FIFO, socket or other character device: read as is.
        case stream
        /// A regular file: read to its end, then the source is exhausted.
        case file
    }

    /// The supported baud rates (NMEA 0183 is 4800; most receivers default to 9600).
    static let baudRates: [Int: speed_t] = [
        4800: speed_t(B4800), 9600: speed_t(B9600), 19200: speed_t(B19200),
        38400: speed_t(B38400), 57600: speed_t(B57600), 115200: speed_t(B115200),
    ]

    /// Opens `path` non-blocking for reading and configures a terminal as raw
    /// 8N1 at `baud`, ignoring modem lines (CLOCAL), with reads returning at once.
    static func open(_ path: String, baud: Int) throws(ByteSourceError) -> (fd: Int32, kind: Kind) {
        #if canImport(Glibc)
            let fd = Glibc.open(path, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC)
        #else
            let fd = Darwin.open(path, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC)
        #endif
        guard fd >= 0 else {
            let code = errno
            var message = "cannot open \(path): \(ReconnectingReader.errnoText(code))"
            let permission = code == EACCES || code == EPERM
            if permission { message += " (add the service user to the device's group, usually dialout)" }
            throw ByteSourceError(message: message, permission: permission)
        }
        var st = stat()
        guard fstat(fd, &st) == 0 else {
            let text = ReconnectingReader.errnoText()
            close(fd)
            throw ByteSourceError(message: "cannot stat \(path): \(text)")
        }
        let type = st.st_mode & S_IFMT
        if type == S_IFREG { return (fd, .file) }
        guard type == S_IFCHR, isatty(fd) == 1 else { return (fd, .stream) }
        do { try configure(fd, baud: baud, path: path) } catch {
            close(fd)
            throw error
        }
        return (fd, .terminal)
    }

    /// Raw mode (no echo, no line editing, no CR/LF translation), 8 data bits,
    /// no parity, 1 stop bit, receiver on, modem control lines ignored.
    static func configure(_ fd: Int32, baud: Int, path: String) throws(ByteSourceError) {
        guard let speed = baudRates[baud] else {
            throw ByteSourceError(message: "unsupported baud rate \(baud) (use one of \(supportedList))")
        }
        var t = termios()
        guard tcgetattr(fd, &t) == 0 else {
            throw ByteSourceError(message: "cannot read the terminal settings of \(path): \(ReconnectingReader.errnoText())")
        }
        cfmakeraw(&t)
        t.c_cflag |= tcflag_t(CLOCAL) | tcflag_t(CREAD)
        t.c_cflag &= ~(tcflag_t(CSTOPB) | tcflag_t(PARENB) | tcflag_t(CRTSCTS))
        withUnsafeMutableBytes(of: &t.c_cc) { cc in
            cc[Int(VMIN)] = 0
            cc[Int(VTIME)] = 0
        }
        guard cfsetispeed(&t, speed) == 0, cfsetospeed(&t, speed) == 0, tcsetattr(fd, TCSANOW, &t) == 0 else {
            throw ByteSourceError(message: "cannot set \(path) to raw \(baud) baud: \(ReconnectingReader.errnoText())")
        }
    }

    /// `4800, 9600, …` for messages.
    static var supportedList: String { baudRates.keys.sorted().map(String.init).joined(separator: ", ") }
}
