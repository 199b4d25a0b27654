// grpcreflect describes a gRPC server through server reflection alone, as grpcurl does: it lists the services,
// fetches the files that define them and every import by name, and builds them into a fresh registry with
// protodesc, which checks each file as protoc does (names, imports, reserved ranges, overlaps).
//
// Usage: grpcreflect HOST:PORT
//
// Prints JSON {"implementation", "files": {name: sha256 of the file}, "services": {name: [[method, in, out]]}};
// exits 1 with the error when a file does not build.
package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"google.golang.org/grpc"
	rpb "google.golang.org/grpc/reflection/grpc_reflection_v1alpha"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
)

func fail(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
	os.Exit(1)
}

func main() {
	if len(os.Args) != 2 {
		fail("usage: grpcreflect HOST:PORT")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	conn, err := grpc.DialContext(ctx, os.Args[1], grpc.WithInsecure(), grpc.WithBlock())
	if err != nil {
		fail("dial %s: %v", os.Args[1], err)
	}
	defer conn.Close()
	stream, err := rpb.NewServerReflectionClient(conn).ServerReflectionInfo(ctx)
	if err != nil {
		fail("reflection stream: %v", err)
	}
	ask := func(request *rpb.ServerReflectionRequest) *rpb.ServerReflectionResponse {
		if err := stream.Send(request); err != nil {
			fail("send: %v", err)
		}
		reply, err := stream.Recv()
		if err != nil {
			fail("receive: %v", err)
		}
		if e := reply.GetErrorResponse(); e != nil {
			fail("reflection error for %v: %s", request, e.ErrorMessage)
		}
		return reply
	}

	var services []string
	listed := ask(&rpb.ServerReflectionRequest{MessageRequest: &rpb.ServerReflectionRequest_ListServices{ListServices: "*"}})
	for _, s := range listed.GetListServicesResponse().Service {
		services = append(services, s.Name)
	}
	files := map[string]*descriptorpb.FileDescriptorProto{}
	keep := func(reply *rpb.ServerReflectionResponse) {
		for _, raw := range reply.GetFileDescriptorResponse().FileDescriptorProto {
			file := &descriptorpb.FileDescriptorProto{}
			if err := proto.Unmarshal(raw, file); err != nil {
				fail("undecodable FileDescriptorProto: %v", err)
			}
			if _, ok := files[file.GetName()]; !ok {
				files[file.GetName()] = file
			}
		}
	}
	for _, service := range services {
		keep(ask(&rpb.ServerReflectionRequest{
			MessageRequest: &rpb.ServerReflectionRequest_FileContainingSymbol{FileContainingSymbol: service},
		}))
	}
	for {
		missing := ""
		for _, file := range files {
			for _, dependency := range file.Dependency {
				if _, ok := files[dependency]; !ok {
					missing = dependency
				}
			}
		}
		if missing == "" {
			break
		}
		keep(ask(&rpb.ServerReflectionRequest{
			MessageRequest: &rpb.ServerReflectionRequest_FileByFilename{FileByFilename: missing},
		}))
	}

	set := &descriptorpb.FileDescriptorSet{}
	digests := map[string]string{}
	for name, file := range files {
		set.File = append(set.File, file)
		bytes, err := proto.MarshalOptions{Deterministic: true}.Marshal(file)
		if err != nil {
			fail("marshal %s: %v", name, err)
		}
		sum := sha256.Sum256(bytes)
		digests[name] = hex.EncodeToString(sum[:])
	}
	registry, err := protodesc.NewFiles(set)
	if err != nil {
		fail("%v", err)
	}
	described := map[string][][3]string{}
	for _, service := range services {
		found, err := registry.FindDescriptorByName(protoreflect.FullName(service))
		if err != nil {
			fail("service %s: %v", service, err)
		}
		methods := found.(protoreflect.ServiceDescriptor).Methods()
		described[service] = [][3]string{}
		for i := 0; i < methods.Len(); i++ {
			m := methods.Get(i)
			described[service] = append(described[service],
				[3]string{string(m.Name()), string(m.Input().FullName()), string(m.Output().FullName())})
		}
	}
	out, _ := json.Marshal(map[string]interface{}{"implementation": "go-protodesc", "files": digests, "services": described})
	fmt.Println(string(out))
}
