import Foundation

/// One geofence crossing as it travels in schema v1 (`geofence_events[]`).
public struct WireGeofenceEvent: Hashable, Sendable {
    /// Event id (UUIDv7).
    public var id: UUID
    /// The application's geofence id.
    public var geofenceId: String
    /// Enter or exit.
    public var type: GeofenceTransition
    /// When the crossing occurred.
    public var timestamp: WireTimestamp

    /// Creates a wire geofence event.
    public init(id: UUID, geofenceId: String, type: GeofenceTransition, timestamp: WireTimestamp) {
        self.id = id
        self.geofenceId = geofenceId
        self.type = type
        self.timestamp = timestamp
    }
}

/// The `device` object: constant per install.
public struct WireDevice: Hashable, Sendable {
    /// UUIDv7 created once per install.
    public var installId: UUID
    /// `linux`, `macos`, `ios`, `android`; receivers must accept values they do not know.
    public var platform: String
    /// The SDK's version string.
    public var sdkVersion: String
    /// Hardware model; omitted on the wire when nil or blank.
    public var model: String?
    /// How often the SDK uploads, in whole seconds (`sync_interval_seconds`, optional,
    /// must-ignore): lets a server tell a quiet device from a lost one. Omitted when nil.
    public var syncIntervalSeconds: Int?
    /// How often a stationary device still reports, in whole seconds
    /// (`check_in_interval_seconds`, optional, must-ignore). Omitted when nil.
    public var checkInIntervalSeconds: Int?

    /// Creates a device description.
    public init(
        installId: UUID, platform: String, sdkVersion: String, model: String? = nil,
        syncIntervalSeconds: Int? = nil, checkInIntervalSeconds: Int? = nil
    ) {
        self.installId = installId
        self.platform = platform
        self.sdkVersion = sdkVersion
        self.model = model
        self.syncIntervalSeconds = syncIntervalSeconds
        self.checkInIntervalSeconds = checkInIntervalSeconds
    }
}

/// One upload: the schema-v1 envelope.
public struct WireEnvelope: Hashable, Sendable {
    /// The only version this type speaks.
    public static let schemaVersion = 1

    /// Fresh per batch; a retry carries the same id.
    public var batchId: UUID
    /// The tracking run the locations belong to.
    public var sessionId: UUID
    /// When the device assembled the batch.
    public var sentAt: WireTimestamp
    /// The sending device.
    public var device: WireDevice
    /// Application key/value pairs; omitted on the wire when empty.
    public var extras: [String: String]
    /// The batched fixes, oldest first.
    public var locations: [WireLocation]
    /// Geofence crossings since the last batch.
    public var geofenceEvents: [WireGeofenceEvent]
    /// Beacon proximity transitions since the last batch (BY-5); omitted on the wire when empty.
    public var proximityEvents: [WireProximityEvent] = []

    /// Creates an envelope.
    public init(
        batchId: UUID, sessionId: UUID, sentAt: WireTimestamp, device: WireDevice,
        extras: [String: String] = [:], locations: [WireLocation], geofenceEvents: [WireGeofenceEvent] = []
    ) {
        self.batchId = batchId
        self.sessionId = sessionId
        self.sentAt = sentAt
        self.device = device
        self.extras = extras
        self.locations = locations
        self.geofenceEvents = geofenceEvents
    }
}
