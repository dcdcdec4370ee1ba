#if os(Linux)
    import BeekonBeacons
    import BeekonBeaconsAppleGlueCheck
    import Testing

    /// The beacon module's CoreLocation glue (Sources/BeekonBeacons/Apple) is compiled on Linux
    /// against the CoreLocation shim by `BeekonBeaconsAppleGlueCheck`, which this test target
    /// depends on: a shim signature the glue does not match fails the build. Nothing here
    /// touches CoreLocation (the shim traps); creating the ranger does not either.
    @Suite("Beacon Apple glue type-check")
    struct BeaconAppleGlueCheckTests {
        @Test("BY-5: the CoreLocation ranger is the wake coordinator's ranging control")
        func theRangerIsARangingControl() {
            let pump = BeaconRegion(identifier: "pump", uuid: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", major: 4)!
            let ranger: any BeaconRangingControl = CoreLocationBeaconRanger(regions: [pump, .any])
            #expect(ranger is CoreLocationBeaconRanger)
        }
    }
#endif
