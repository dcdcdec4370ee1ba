import BeekonChaos
import IngestLoopback
import BeekonTesting
import Foundation
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A throwaway PKI made with openssl for one test: a CA, a server certificate it signed for
/// `localhost` and 127.0.0.1, and a second CA that signed nothing (the "wrong CA").
struct TestPKI {
    let ca: String
    let wrongCA: String
    let certificate: String
    let key: String

    static func make(in dir: ChaosDir) async throws -> TestPKI {
        let p = { (name: String) in dir.path(name) }
        try "subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n"
            .write(toFile: p("server.ext"), atomically: true, encoding: .utf8)
        let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        for step in [
            ["req", "-x509"] + ec + ["-keyout", p("ca.key"), "-out", p("ca.pem"), "-days", "2", "-subj", "/CN=Beekon Test CA"],
            ["req", "-x509"] + ec + [
                "-keyout", p("wrong-ca.key"), "-out", p("wrong-ca.pem"), "-days", "2", "-subj", "/CN=Beekon Wrong CA",
            ],
            ["req"] + ec + ["-keyout", p("server.key"), "-out", p("server.csr"), "-subj", "/CN=localhost"],
            [
                "x509", "-req", "-in", p("server.csr"), "-CA", p("ca.pem"), "-CAkey", p("ca.key"), "-CAcreateserial",
                "-out", p("server.pem"), "-days", "2", "-extfile", p("server.ext"),
            ],
        ] {
            let run = try await ChildProcess(URL(fileURLWithPath: try Tools.find("openssl")), step, dir: dir, name: "openssl")
                .finish(timeout: .seconds(60))
            guard run.status == 0 else { throw TestFailure("openssl \(step.prefix(2).joined(separator: " ")): \(run.stderr)") }
        }
        // nginx may run as nobody: it must read the (throwaway) key.
        chmod(p("server.key"), 0o644)
        return TestPKI(ca: p("ca.pem"), wrongCA: p("wrong-ca.pem"), certificate: p("server.pem"), key: p("server.key"))
    }
}

/// nginx terminating TLS (HTTP/1.1 and HTTP/2) on a free high 127.0.0.1 port and proxying to
/// `beekon-ingest`, with its own prefix, temp paths and logs; as `nobody` when the tests run as root.
final class NginxTLSProxy: @unchecked Sendable {
    let port: Int
    private let prefix: String
    private let child: ChildProcess

    init(dir: ChaosDir, upstreamPort: Int, pki: TestPKI) throws {
        let nginx = try Tools.find("nginx", in: ["/usr/sbin", "/usr/local/sbin", "/usr/bin"])
        prefix = dir.path("nginx")
        try FileManager.default.createDirectory(atPath: prefix + "/tmp", withIntermediateDirectories: true)
        chmod(prefix, 0o777)
        chmod(prefix + "/tmp", 0o777)
        chmod(dir.url.path, 0o755)
        let probe = try LoopbackSocket.listen()
        close(probe.fd)
        port = probe.port
        let conf = """
            daemon off;
            worker_processes 1;
            pid \(prefix)/nginx.pid;
            error_log \(prefix)/error.log warn;
            events { worker_connections 64; }
            http {
                access_log \(prefix)/access.log;
                client_body_temp_path \(prefix)/tmp/body;
                proxy_temp_path \(prefix)/tmp/proxy;
                fastcgi_temp_path \(prefix)/tmp/fastcgi;
                uwsgi_temp_path \(prefix)/tmp/uwsgi;
                scgi_temp_path \(prefix)/tmp/scgi;
                server {
                    listen 127.0.0.1:\(port) ssl http2;
                    server_name localhost;
                    ssl_certificate \(pki.certificate);
                    ssl_certificate_key \(pki.key);
                    client_max_body_size 8m;
                    location / {
                        proxy_pass http://127.0.0.1:\(upstreamPort);
                        proxy_http_version 1.1;
                        proxy_set_header Connection "";
                    }
                }
            }
            """
        try conf.write(toFile: prefix + "/nginx.conf", atomically: true, encoding: .utf8)
        let arguments = ["-p", prefix + "/", "-c", prefix + "/nginx.conf", "-e", prefix + "/error.log"]
        if getuid() == 0 {
            // Unprivileged: never a root master process listening for the tests.
            child = try ChildProcess(
                URL(fileURLWithPath: try Tools.find("setpriv")),
                ["--reuid=65534", "--regid=65534", "--clear-groups", nginx] + arguments, dir: dir, name: "nginx")
        } else {
            child = try ChildProcess(URL(fileURLWithPath: nginx), arguments, dir: dir, name: "nginx")
        }
        let deadline = Date().addingTimeInterval(20)
        while true {
            if let fd = LoopbackSocket.connect(port: port) {
                close(fd)
                break
            }
            guard child.isRunning, Date() < deadline else {
                stop()
                throw TestFailure("nginx did not start: \(child.stderr) \(errorLog)")
            }
            Thread.sleep(forTimeInterval: 0.05)  // polling the start-up, bounded by the deadline
        }
    }

    var url: String { "https://localhost:\(port)" }
    var accessLog: String { (try? String(contentsOfFile: prefix + "/access.log", encoding: .utf8)) ?? "" }
    var errorLog: String { (try? String(contentsOfFile: prefix + "/error.log", encoding: .utf8)) ?? "" }

    func stop() {
        guard child.isRunning else { return }
        child.kill(SIGQUIT)
        // A failure bound: a graceful quit takes milliseconds.
        if child.waitForExit(timeout: 30) == nil { child.kill() }
    }

    deinit { stop() }
}

/// Finds a program by name.
enum Tools {
    static func find(_ name: String, in extra: [String] = []) throws -> String {
        let path = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":").map(String.init)
        for folder in extra + path + ["/usr/sbin", "/sbin"] where FileManager.default.isExecutableFile(atPath: folder + "/" + name) {
            return folder + "/" + name
        }
        throw TestFailure("\(name) is not installed (.ci/run installs it)")
    }
}
