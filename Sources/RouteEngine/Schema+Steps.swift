/// One screen of a resolved path: what the app shows there, with the params it needs.
public struct PathStep: Hashable, Sendable {
    public var destination: String
    public var params: [String: ParamValue]
    public var presentation: Presentation

    public init(destination: String, params: [String: ParamValue] = [:], presentation: Presentation = .push) {
        self.destination = destination
        self.params = params
        self.presentation = presentation
    }
}

extension Schema {
    /// The screens of `proceed.path`, root first, each with its presentation and params.
    ///
    /// The rule (`docs/resolution.md`, "Ancestors"): the leaf gets the resolution's params;
    /// an ancestor gets, of those, the ones it declares, by name, and nothing else. An
    /// ancestor's param the leaf does not have is left out (an optional one is expected;
    /// the app decides what a required one missing means). The resolution already checked
    /// every value against the leaf's types; an ancestor declaring the same name with
    /// another type does not get it.
    public func steps(for proceed: Proceed) -> [PathStep] {
        proceed.path.enumerated().map { position, name in
            let spec = destinations[name]
            let isLeaf = position == proceed.path.count - 1
            var params: [String: ParamValue] = [:]
            if isLeaf {
                params = proceed.params
            } else if let spec {
                for (key, declared) in spec.params {
                    if let value = proceed.params[key], case .success = declared.value(from: value) { params[key] = value }
                }
            }
            return PathStep(destination: name, params: params, presentation: spec?.presentation ?? .push)
        }
    }
}
