import Foundation

/// The push senders (SPEC XR-6): APNs for Apple devices, FCM for Android clients. Each is off
/// unless configured; a device whose provider is off keeps today's path (command channel and
/// ingest answers).
package struct PushConfiguration: Sendable, Equatable {
    /// APNs token-based authentication; nil: no APNs pushes.
    package var apns: APNsConfiguration?
    /// FCM HTTP v1; nil: no FCM pushes.
    package var fcm: FCMConfiguration?
    /// A PEM file of extra trusted roots for the providers' TLS (tests' local providers); nil: the system's.
    package var caFile: String?
    /// First back-off before a retried push (doubling per attempt; default 1 s).
    package var retryBaseSeconds: Double = 1
    /// Attempts per push, the first included (default 4); retries also stop at the request's expiry.
    package var maxAttempts: Int = 4

    /// Creates a configuration with both senders off.
    package init(apns: APNsConfiguration? = nil, fcm: FCMConfiguration? = nil, caFile: String? = nil) {
        self.apns = apns
        self.fcm = fcm
        self.caFile = caFile
    }

    /// Whether any sender is configured.
    package var isEnabled: Bool { apns != nil || fcm != nil }
}

/// APNs with a `.p8` signing key (Apple Developer → Keys), its key id and the team id.
package struct APNsConfiguration: Sendable, Equatable {
    /// Path of the `.p8` file (a PKCS#8 PEM P-256 private key).
    package var keyPath: String
    /// The key's 10-character id (the JWT's `kid`).
    package var keyId: String
    /// The developer team id (the JWT's `iss`).
    package var teamId: String
    /// Base URL for production tokens.
    package var productionURL: String
    /// Base URL for sandbox (development) tokens.
    package var sandboxURL: String
    /// The bundle ids (`apns-topic`) pushes may go to (`--apns-topic`, at least one): a key signs
    /// for every app of its team, so a device must not name the topic (issue 50: one named
    /// `com.attacker.other-app` and got pushes signed for it). A token for another topic is
    /// refused at registration and never pushed to.
    package var topics: Set<String>

    /// Creates a configuration; `url` replaces both hosts (a local stand-in in tests).
    package init(keyPath: String, keyId: String, teamId: String, topics: Set<String>, url: String? = nil) {
        self.keyPath = keyPath
        self.keyId = keyId
        self.teamId = teamId
        self.topics = topics
        productionURL = url ?? "https://api.push.apple.com"
        sandboxURL = url ?? "https://api.sandbox.push.apple.com"
    }
}

/// FCM HTTP v1 with a Google service-account key file.
package struct FCMConfiguration: Sendable, Equatable {
    /// Path of the service-account JSON (`project_id`, `private_key`, `client_email`, `token_uri`).
    package var serviceAccountPath: String
    /// Base URL of the FCM API (default `https://fcm.googleapis.com`).
    package var endpoint: String

    /// Creates a configuration.
    package init(serviceAccountPath: String, endpoint: String = "https://fcm.googleapis.com") {
        self.serviceAccountPath = serviceAccountPath
        self.endpoint = endpoint
    }
}
