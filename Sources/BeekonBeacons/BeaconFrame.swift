/// A decoded beacon advertisement (SPEC BY-5). Every variant that carries a power
/// reports it as ``measuredPowerAt1m``: iBeacon and AltBeacon publish the RSSI at 1 m,
/// Eddystone its transmit power at 0 m, normalised here to 1 m by −41 dB.
public enum BeaconFrame: Sendable, Equatable {
    /// Apple iBeacon: company 0x004C, type 0x02, length 0x15.
    case iBeacon(identity: BeaconIdentity, measuredPower: Int)
    /// AltBeacon: code 0xBEAC under any company id, 20-byte beacon id, reference RSSI at 1 m, and the
    /// manufacturer-reserved byte (nil when the structure ends before it, which the AltBeacon library accepts).
    case altBeacon(identity: BeaconIdentity, beaconID: [UInt8], referenceRSSI: Int, manufacturer: UInt16, reserved: UInt8?)
    /// Eddystone-UID: namespace + instance, transmit power at 0 m.
    case eddystoneUID(identity: BeaconIdentity, txPowerAt0m: Int)
    /// Eddystone-URL: the expanded URL, transmit power at 0 m.
    case eddystoneURL(url: String, txPowerAt0m: Int)
    /// Eddystone-TLM (unencrypted, version 0).
    case eddystoneTLM(EddystoneTelemetry)
    /// Eddystone-EID: the 8-byte ephemeral id, transmit power at 0 m.
    case eddystoneEID(eid: [UInt8], txPowerAt0m: Int)

    /// The path loss between 0 m and 1 m that Eddystone's specification tells receivers to subtract.
    public static let eddystoneOneMetreLoss = 41

    /// The identity a region can match; nil for URL, TLM and EID frames.
    public var identity: BeaconIdentity? {
        switch self {
        case let .iBeacon(identity, _), let .altBeacon(identity, _, _, _, _), let .eddystoneUID(identity, _):
            return identity
        case .eddystoneURL, .eddystoneTLM, .eddystoneEID:
            return nil
        }
    }

    /// The expected RSSI at 1 m, in dBm; nil for TLM frames (they carry no power).
    public var measuredPowerAt1m: Int? {
        switch self {
        case let .iBeacon(_, power): return power
        case let .altBeacon(_, _, rssi, _, _): return rssi
        case let .eddystoneUID(_, p), let .eddystoneURL(_, p), let .eddystoneEID(_, p):
            return p - Self.eddystoneOneMetreLoss
        case .eddystoneTLM: return nil
        }
    }

    /// A short name of the frame kind (`ibeacon`, `altbeacon`, `eddystone-uid`, …).
    public var kind: String {
        switch self {
        case .iBeacon: return "ibeacon"
        case .altBeacon: return "altbeacon"
        case .eddystoneUID: return "eddystone-uid"
        case .eddystoneURL: return "eddystone-url"
        case .eddystoneTLM: return "eddystone-tlm"
        case .eddystoneEID: return "eddystone-eid"
        }
    }
}

/// The unencrypted Eddystone-TLM payload.
public struct EddystoneTelemetry: Sendable, Equatable {
    /// Battery voltage in mV (0: not supported).
    public var batteryMillivolts: Int
    /// Beacon temperature in °C (8.8 fixed point); nil when the beacon sends −128 °C ("not supported").
    public var temperature: Double?
    /// Advertising PDUs sent since power-up or reboot.
    public var advertisementCount: UInt32
    /// Time since power-up or reboot, in seconds (sent in 0.1 s units).
    public var uptimeSeconds: Double
}
