package image

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
)

// ociImage is what the image checks need of an OCI archive: the image
// config and the files of its layers, applied in order.
type ociImage struct {
	config struct {
		User         string              `json:"User"`
		Entrypoint   []string            `json:"Entrypoint"`
		Cmd          []string            `json:"Cmd"`
		WorkingDir   string              `json:"WorkingDir"`
		ExposedPorts map[string]struct{} `json:"ExposedPorts"`
		Volumes      map[string]struct{} `json:"Volumes"`
		Labels       map[string]string   `json:"Labels"`
	}
	// files by absolute path ("/etc/passwd"); directories too.
	files map[string]ociFile
	// layerBytes is the size of the layers uncompressed: what the image
	// takes in a store.
	layerBytes int64
}

// ociFile is one entry of a layer.
type ociFile struct {
	hdr  *tar.Header
	body []byte // regular files only
}

type ociDescriptor struct {
	MediaType string `json:"mediaType"`
	Digest    string `json:"digest"`
}

// readOCIArchive reads an oci-archive (a tar of an OCI image layout with
// one image, as `buildah push IMAGE oci-archive:PATH` writes it).
func readOCIArchive(file string) (*ociImage, error) {
	blobs, err := untarAll(file)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	var index struct{ Manifests []ociDescriptor }
	if err := json.Unmarshal(blobs["index.json"], &index); err != nil {
		return nil, fmt.Errorf("%s: index.json: %w", file, err)
	}
	if len(index.Manifests) != 1 {
		return nil, fmt.Errorf("%s: index.json lists %d manifests, want 1", file, len(index.Manifests))
	}
	var manifest struct {
		Config ociDescriptor
		Layers []ociDescriptor
	}
	if err := json.Unmarshal(blob(blobs, index.Manifests[0].Digest), &manifest); err != nil {
		return nil, fmt.Errorf("%s: manifest: %w", file, err)
	}
	img := &ociImage{files: map[string]ociFile{}}
	var cfg struct {
		Config json.RawMessage `json:"config"`
	}
	if err := json.Unmarshal(blob(blobs, manifest.Config.Digest), &cfg); err != nil {
		return nil, fmt.Errorf("%s: image config: %w", file, err)
	}
	if err := json.Unmarshal(cfg.Config, &img.config); err != nil {
		return nil, fmt.Errorf("%s: image config: %w", file, err)
	}
	for _, l := range manifest.Layers {
		if err := img.addLayer(l, blob(blobs, l.Digest)); err != nil {
			return nil, fmt.Errorf("%s: layer %s: %w", file, l.Digest, err)
		}
	}
	return img, nil
}

// addLayer applies one layer's entries (whiteouts are not expected in a
// single-layer scratch image and are refused).
func (img *ociImage) addLayer(d ociDescriptor, data []byte) error {
	var r io.Reader = bytes.NewReader(data)
	if strings.HasSuffix(d.MediaType, "+gzip") {
		zr, err := gzip.NewReader(r)
		if err != nil {
			return err
		}
		r = zr
	}
	counted := &countingReader{r: r}
	tr := tar.NewReader(counted)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		name := path.Clean("/" + hdr.Name)
		if strings.HasPrefix(path.Base(name), ".wh.") {
			return fmt.Errorf("whiteout %s in a scratch image", name)
		}
		f := ociFile{hdr: hdr}
		if hdr.Typeflag == tar.TypeReg {
			if f.body, err = io.ReadAll(tr); err != nil {
				return err
			}
		}
		img.files[name] = f
	}
	_, _ = io.Copy(io.Discard, counted) // the tar's padding counts too
	img.layerBytes += counted.n
	return nil
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// blob is the content of a digest ("sha256:...") in the layout.
func blob(blobs map[string][]byte, digest string) []byte {
	return blobs["blobs/"+strings.Replace(digest, ":", "/", 1)]
}

// untarAll reads every regular file of a tar into memory by its path.
func untarAll(file string) (map[string][]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string][]byte{}
	tr := tar.NewReader(f)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if hdr.Typeflag != tar.TypeReg {
			continue
		}
		if out[path.Clean(hdr.Name)], err = io.ReadAll(tr); err != nil {
			return nil, err
		}
	}
}
