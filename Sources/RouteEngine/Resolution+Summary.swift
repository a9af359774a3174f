extension Resolution {
    /// One line for logs, benchmarks and test tables: `proceed product product id=p1`
    /// (outcome, route or `-`, destination, params by name), `gated auth order-detail`
    /// (precondition, route or `-`), `notFound validationFailed product` (reason, route if any).
    public var summary: String {
        switch self {
        case .proceed(let proceed):
            let params = proceed.params.keys.sorted().map { "\($0)=\(proceed.params[$0]!)" }
            return (["proceed", proceed.routeID ?? "-", proceed.destination] + params).joined(separator: " ")
        case .gated(let gate):
            return ["gated", gate.precondition, gate.routeID ?? "-"].joined(separator: " ")
        case .notFound(let notFound):
            return (["notFound", notFound.reason.rawValue] + (notFound.routeID.map { [$0] } ?? [])).joined(separator: " ")
        }
    }
}
