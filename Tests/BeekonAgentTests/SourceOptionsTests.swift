import ArgumentParser
import Foundation
import Testing
@testable import BeekonAgent

/// `--source` and its parameters are one `OptionGroup` (`SourceOptions`, with
/// `ReplayOptions` for `track`'s replay pace), parsed the same way by every command that has it.
@Suite("Agent options: the --source group")
struct SourceOptionsTests {
    @Test("track parses the source group, its timeout and the replay pace")
    func track() throws {
        let command = try TrackCommand.parse([
            "--source", "gpsd://10.0.0.2:2948", "--source-timeout", "5", "--speed", "4", "--rebase", "--db", "/tmp/x.sqlite",
        ])
        #expect(try command.sourceOptions.spec() == .gpsd(host: "10.0.0.2", port: 2948))
        #expect(try command.sourceOptions.grace(default: 60) == 5)
        let pace = try command.replay.pace()
        #expect(pace.speed == .multiplier(4) && pace.rebase)
        #expect(command.state.db == "/tmp/x.sqlite")
    }

    @Test("track's defaults: 60 s source timeout, as fast as possible, not rebased")
    func trackDefaults() throws {
        let command = try TrackCommand.parse(["--source", "replay:walk.gpx"])
        #expect(try command.sourceOptions.spec() == .replay(path: "walk.gpx"))
        #expect(try command.sourceOptions.grace(default: 60) == 60)
        let pace = try command.replay.pace()
        #expect(pace.speed == .asFastAsPossible && !pace.rebase)
    }

    @Test("locate parses the same group (10 s default timeout) and has no replay pace")
    func locate() throws {
        let command = try LocateCommand.parse(["--source", "nmea:/dev/ttyUSB0?baud=9600", "--config", "a.json"])
        #expect(try command.sourceOptions.spec() == .nmea(path: "/dev/ttyUSB0", baud: 9600))
        #expect(try command.sourceOptions.grace(default: 10) == 10)
        #expect(throws: (any Error).self) { try LocateCommand.parse(["--source", "gpsd", "--config", "a.json", "--speed", "2"]) }
        let timed = try LocateCommand.parse(["--source", "gpsd", "--config", "a.json", "--source-timeout", "3"])
        #expect(try timed.sourceOptions.grace(default: 10) == 3)
    }

    @Test("--source is required by both commands")
    func sourceRequired() {
        #expect(throws: (any Error).self) { try TrackCommand.parse([]) }
        #expect(throws: (any Error).self) { try LocateCommand.parse(["--config", "a.json"]) }
    }

    @Test("a bad source, timeout or pace exits 2", arguments: [["--source", "bogus:x"], ["--source", "gpsd", "--source-timeout", "0"]])
    func badValuesExitTwo(_ arguments: [String]) throws {
        let options = try SourceOptions.parse(arguments)
        #expect(throws: ExitCode(2)) {
            _ = try options.spec()
            _ = try options.grace(default: 60)
        }
        #expect(throws: ExitCode(2)) { try ReplayOptions.parse(["--speed", "0"]).pace() }
    }
}
