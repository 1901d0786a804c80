@testable import PanesCore
import Testing

@Suite struct SwitcherWatchersTests {
    @Test func scenesWatchTheirOwnUsersListUntilTheyStop() {
        var switcher = SwitcherWatchers()
        let alice = OwnerKey(workspace: "w", user: "alice")
        let bob = OwnerKey(workspace: "w", user: "bob")
        switcher.watch(SceneID("s1"), of: alice)
        switcher.watch(SceneID("s2"), of: alice)
        switcher.watch(SceneID("s3"), of: bob)
        #expect(switcher.scenes(of: alice) == [SceneID("s1"), SceneID("s2")])
        switcher.unwatch(SceneID("s1"), of: alice)
        switcher.unwatch(SceneID("s3"), of: bob)
        #expect(switcher.scenes(of: alice) == [SceneID("s2")])
        #expect(switcher.scenes(of: bob).isEmpty)
    }
}
