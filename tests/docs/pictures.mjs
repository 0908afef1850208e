// Placeholder until the pictures script lands: nothing to compare yet.
export async function checkPictures() {
  return [];
}
