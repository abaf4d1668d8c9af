# For people who build with Docker: `docker build --target operator -t duroxide/operator:dev .`
# and `--target sample-worker`. `make images` builds the same images without Docker.
FROM golang:1.26 AS build
WORKDIR /src
# The library and its other modules (api, controllers, cmd/manager, otlp, cmd/sample-worker), built together by go.work.
COPY go.work go.mod go.sum ./
COPY api/go.mod api/go.sum api/
COPY controllers/go.mod controllers/go.sum controllers/
COPY cmd/manager/go.mod cmd/manager/go.sum cmd/manager/
COPY otlp/go.mod otlp/go.sum otlp/
COPY cmd/sample-worker/go.mod cmd/sample-worker/go.sum cmd/sample-worker/
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o /out/manager ./cmd/manager && \
    CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o /out/sample-worker ./cmd/sample-worker

FROM scratch AS operator
COPY --from=build /out/manager /manager
USER 65532:65532
ENTRYPOINT ["/manager"]

FROM scratch AS sample-worker
COPY --from=build /out/sample-worker /sample-worker
USER 65532:65532
ENTRYPOINT ["/sample-worker"]
