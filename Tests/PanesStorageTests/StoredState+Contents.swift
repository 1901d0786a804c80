import PanesCore

extension StoredState {
    /// What is stored, less the deployment's link secret that every store makes once, when it
    /// is created (`StoredState.linkSecret`): what "nothing is stored" compares.
    var contents: StoredState {
        var copy = self
        copy.linkSecret = []
        return copy
    }
}
