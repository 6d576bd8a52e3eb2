module github.com/weftrt/weft/lib

go 1.26

require (
	github.com/stretchr/testify v1.12.1
	github.com/weftrt/weft v0.1.0
	github.com/weftrt/weft/conformance v0.1.0
	github.com/weftrt/weft/core v0.1.0
	github.com/weftrt/weft/runtime v0.1.0
	go.uber.org/goleak v1.3.0
)

require (
	github.com/fsnotify/fsnotify v1.9.0 // indirect
	github.com/go-viper/mapstructure/v2 v2.4.0 // indirect
	github.com/knadh/koanf/maps v0.1.2 // indirect
	github.com/knadh/koanf/parsers/json v1.0.1 // indirect
	github.com/knadh/koanf/parsers/toml/v2 v2.1.0 // indirect
	github.com/knadh/koanf/parsers/yaml v1.1.1 // indirect
	github.com/knadh/koanf/providers/confmap v1.0.1 // indirect
	github.com/knadh/koanf/providers/file v1.2.1 // indirect
	github.com/knadh/koanf/v2 v2.4.1 // indirect
	github.com/mitchellh/copystructure v1.2.0 // indirect
	github.com/mitchellh/reflectwalk v1.0.2 // indirect
	github.com/pelletier/go-toml/v2 v2.2.2 // indirect
	github.com/weftrt/weft/drivers/epoll v0.1.0 // indirect
	github.com/weftrt/weft/drivers/internal v0.1.0 // indirect
	github.com/weftrt/weft/drivers/iouring v0.1.0 // indirect
	github.com/weftrt/weft/drivers/kqueue v0.1.0 // indirect
	github.com/weftrt/weft/schedulers/currentthread v0.1.0 // indirect
	github.com/weftrt/weft/schedulers/internal v0.1.0 // indirect
	github.com/weftrt/weft/schedulers/percore v0.1.0 // indirect
	github.com/weftrt/weft/schedulers/workstealing v0.1.0 // indirect
	github.com/weftrt/weft/timers/heap v0.1.0 // indirect
	github.com/weftrt/weft/timers/wheel v0.1.0 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/sys v0.32.0 // indirect
)

// Sibling modules, so the packages build and test on their own (GOWORK=off).
replace (
	github.com/weftrt/weft => ../
	github.com/weftrt/weft/conformance => ../conformance
	github.com/weftrt/weft/core => ../core
	github.com/weftrt/weft/drivers/epoll => ../drivers/epoll
	github.com/weftrt/weft/drivers/internal => ../drivers/internal
	github.com/weftrt/weft/drivers/iouring => ../drivers/iouring
	github.com/weftrt/weft/drivers/kqueue => ../drivers/kqueue
	github.com/weftrt/weft/runtime => ../runtime
	github.com/weftrt/weft/schedulers/currentthread => ../schedulers/currentthread
	github.com/weftrt/weft/schedulers/internal => ../schedulers/internal
	github.com/weftrt/weft/schedulers/percore => ../schedulers/percore
	github.com/weftrt/weft/schedulers/workstealing => ../schedulers/workstealing
	github.com/weftrt/weft/timers/heap => ../timers/heap
	github.com/weftrt/weft/timers/wheel => ../timers/wheel
)
