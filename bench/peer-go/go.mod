module tenantgate.local/bench/peer-go

go 1.26
