import BeekonWire
import Foundation
import Logging

/// Everything the SDK touches outside itself, injected: the database file, the
/// location source, the clock, the id generator and the logger. Tests pass a
/// scripted provider and a manual clock; the agent passes gpsd/NMEA/replay.
public struct BeekonDependencies: Sendable {
    /// Path of the SQLite database (created with its directory if missing).
    public var databasePath: String
    /// The location source (SRC-1).
    public var provider: any LocationProvider
    /// Wall-clock time and sleeping.
    public var clock: any BeekonClock
    /// Real time for token lifetimes: when an access token is due for refresh (AU-6) and
    /// how long the breaker stays open (AU-8). Servers issue expiries as real instants, so
    /// a replay whose `clock` follows the track's timestamps passes the real clock here.
    /// Defaults to `clock`.
    public var authClock: any BeekonClock
    /// Id generator for fixes, sessions, batches and the install id.
    public var makeID: @Sendable () -> UUID
    /// Where the SDK logs (no tokens, no query strings).
    public var logger: Logger
    /// Maximum stored fix rows (ST-3); trims oldest beyond it.
    public var rowCap: Int
    /// The network seam for uploads; nil means `URLSessionTransport`, created only
    /// once sync is configured (SY-1: no sync, no network).
    public var transport: (any HTTPTransport)?
    /// Uniform random numbers in [0, 1) for backoff jitter (inject a constant in tests).
    public var randomUnit: @Sendable () -> Double
    /// Where the live auth tokens are kept (AU-9); nil means the platform vault for this
    /// database: `FileSecretStore` next to it on Linux, the Keychain on Apple platforms.
    public var secretStore: (any SecretStore)?
    /// How long the host lets the SDK keep working in the background (uploads, beacon
    /// ranging). Unlimited by default; on iOS the app's background-task budget.
    public var executionBudget: any ExecutionBudget
    /// Whether the instance resumes a persisted session by itself on first use (the
    /// database is opened by any call or by the first `state` subscription): what an app
    /// relaunched in the background by the OS needs. Off by default (the agent and tests
    /// call `resumeIfNeeded()`); on for `Beekon.shared` on Apple platforms.
    public var resumesOnFirstUse: Bool
    /// Fills each fix's `activity` when `BeekonConfig.classifyActivity` is on (BY-4); default
    /// `SpeedActivityClassifier`. On Apple platforms a provider may set CoreMotion's activity
    /// on the fix itself, which is kept.
    public var activityClassifier: any ActivityClassifier = SpeedActivityClassifier()
    /// The app's lifecycle, which switches the foreground/background profile by itself
    /// (BY-4) unless `BeekonConfig.followsAppLifecycle` is off; nil (default) means the host
    /// calls `Beekon.setAppState(_:)`. `apple(databasePath:)` sets UIKit's on iOS.
    public var appLifecycle: (any AppLifecycleSource)?
    /// The battery the locate guard reads (BY-2); nil (default) means unknown, never low.
    /// `apple(databasePath:)` sets UIKit's on iOS.
    public var powerState: (any PowerStateSource)?
    /// The `BGAppRefresh` task identifier the SDK registers and submits on iOS (list it under
    /// `BGTaskSchedulerPermittedIdentifiers`); default `dev.beekon.refresh`. An app may have one
    /// refresh task scheduled in all (`BGTaskScheduler.h`), so an app with its own can name it here.
    public var backgroundRefreshIdentifier = "dev.beekon.refresh"

    /// Creates dependencies; ids default to UUIDv7 read from `clock`.
    public init(
        databasePath: String,
        provider: any LocationProvider,
        clock: any BeekonClock = SystemClock(),
        makeID: (@Sendable () -> UUID)? = nil,
        logger: Logger = Logger(label: "beekon"),
        rowCap: Int = 100_000,
        transport: (any HTTPTransport)? = nil,
        randomUnit: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) },
        secretStore: (any SecretStore)? = nil,
        authClock: (any BeekonClock)? = nil,
        executionBudget: any ExecutionBudget = UnlimitedExecutionBudget(),
        resumesOnFirstUse: Bool = false
    ) {
        self.resumesOnFirstUse = resumesOnFirstUse
        self.executionBudget = executionBudget
        self.authClock = authClock ?? clock
        self.secretStore = secretStore
        self.transport = transport
        self.randomUnit = randomUnit
        self.databasePath = databasePath
        self.provider = provider
        self.clock = clock
        if let makeID {
            self.makeID = makeID
        } else {
            let generator = UUIDv7Generator(now: { clock.now() })
            self.makeID = { generator.next() }
        }
        self.logger = logger
        self.rowCap = rowCap
    }

    /// The secret store in effect: the injected one, else the platform vault for `databasePath`.
    var effectiveSecretStore: any SecretStore {
        if let secretStore { return secretStore }
        #if canImport(Security) && !os(Linux)
            return KeychainSecretStore(databasePath: databasePath)
        #else
            return FileSecretStore(databasePath: databasePath)
        #endif
    }

    /// The default database location: `$XDG_DATA_HOME/beekon/beekon.sqlite`
    /// (or `~/.local/share/...`) on Linux, Application Support on Apple platforms.
    public static var defaultDatabasePath: String {
        #if os(Linux)
            let env = ProcessInfo.processInfo.environment
            let base = env["XDG_DATA_HOME"] ?? (NSHomeDirectory() + "/.local/share")
            return base + "/beekon/beekon.sqlite"
        #else
            let base = FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask).first!
            return base.appendingPathComponent("Beekon/beekon.sqlite").path
        #endif
    }
}

extension BeekonDependencies {
    /// What `Beekon.shared` runs on: on Apple platforms the CoreLocation provider, the
    /// Keychain, the UIKit background-task budget (iOS) and auto-resume; elsewhere the
    /// default database path and a provider whose `start()` explains how to supply one.
    public static var platformDefault: BeekonDependencies {
        #if canImport(CoreLocation) && !os(Linux)
            return .apple(databasePath: defaultDatabasePath)
        #else
            return BeekonDependencies(databasePath: defaultDatabasePath, provider: UnavailableProvider())
        #endif
    }
}

/// The provider `Beekon.shared` uses where the platform has no built-in source:
/// `start()` fails with a message saying how to supply one.
struct UnavailableProvider: LocationProvider {
    func start(mode: PowerMode) async throws -> AsyncThrowingStream<RawFix, any Error> {
        throw LocationProviderError.servicesDisabled(
            "no location source on this platform; create Beekon(dependencies:) with a provider (gpsd, NMEA, replay)")
    }
    func setPowerMode(_ mode: PowerMode) async {}
    func stop() async {}
}
