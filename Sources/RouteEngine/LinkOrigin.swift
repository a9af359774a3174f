/// Which door of the app a link came in by: a universal-link host or a custom scheme.
public enum LinkOrigin: Hashable, Sendable, CustomStringConvertible {
    case web(host: String)
    case custom(scheme: String)

    public var description: String {
        switch self {
        case .web(let host): "https://\(host)"
        case .custom(let scheme): "\(scheme)://"
        }
    }
}
