// A device mesh (dtrain/mesh.h): a shape over the ranks of a communicator of
// its own, from which it splits one communicator per dimension or set of
// dimensions on request.
#pragma once

#include <functional>
#include <memory>
#include <string_view>

#include "comm/communicator.hpp"
#include "parallel/mesh/shape.hpp"

namespace dtrain::parallel::mesh {

class Mesh {
 public:
  // Collective over `comm`. `make_shape` checks this rank's arguments and
  // builds the shape, throwing what is wrong with them: this rank then still
  // takes part in the agreement, so every other rank is refused too
  // (DT_ERR_MISMATCH) instead of waiting. Ranks whose shapes differ are all
  // refused with DT_ERR_MISMATCH. The mesh then splits a communicator of its
  // own off `comm`, which it no longer needs afterwards.
  static std::unique_ptr<Mesh> create(comm::Communicator& comm, const std::function<Shape()>& make_shape);

  Mesh(std::shared_ptr<comm::Communicator> comm, Shape shape);

  const Shape& shape() const { return shape_; }
  int rank() const { return comm_->rank(); }

  // A new communicator over this rank's group in the dimensions `parse`
  // returns (this rank's list, checked as make_shape above). Collective over
  // the mesh; ranks that ask for different sets are refused with
  // DT_ERR_MISMATCH.
  std::shared_ptr<comm::Communicator> communicator(const std::function<DimensionSet(const Shape&)>& parse);

 private:
  std::shared_ptr<comm::Communicator> comm_;
  Shape shape_;
};

}  // namespace dtrain::parallel::mesh
